"""Calls made concurrently under a hard budget, journaled, and handed back in key order.

Budget (in the cost unit: tokens, completion tokens or dollars): a call is made
only if what was already charged, plus the worst case of every attempt in
flight, plus this call's worst case fit the budget (the costliest split of
:meth:`Task.worst_case` at its configuration's :class:`Tariff`); each retry
after a billable attempt is admitted the same way. When the quick check fails,
the call waits for the calls before it and is decided on the exact spend, so
the decision does not depend on timing. Consecutive failed calls of one
configuration stop the run after ``endpoint.max_failures``.
"""

from __future__ import annotations

import datetime
import fnmatch
import json
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from cabench.errors import CabenchError
from cabench.live.charges import (
    DEARER,
    UNPRICED,
    USAGE_ABOVE,
    another_model,
    another_snapshot,
    at_served_price,
    charge,
)
from cabench.live.client import Attempt, ChatClient
from cabench.live.config import Configuration, LiveConfig
from cabench.live.journal import Journal, LogFile
from cabench.live.tariff import Tariff, tariff
from cabench.live.tasks import Bound, Instance, Task


class BudgetStop(Exception):
    """The next call does not fit the budget."""


class FailureStop(Exception):
    """A configuration's calls failed ``max_failures`` times in a row, or a call was billed above its worst case."""


#: What a stopped run says to do next: a folder with an overbilled call makes no further call (:class:`Caller`)
RESUME = "fix the endpoint and re-run to resume"
NEW_FOLDER = ("a run resumed in this folder would make no call: once the endpoint bills within a call's worst case, "
              "use a new --out folder")


def next_step(overbilled: bool) -> str:
    """What to do after a stop for failures (:data:`RESUME`), or for an overbilled call (:data:`NEW_FOLDER`)."""
    return NEW_FOLDER if overbilled else RESUME


#: How far a text the endpoint wrote is read before it is redacted and cut: a key cut at the first cut leaves a
#: piece too short to be known as the key's, and the redaction's shorter marks could bring it into the second.
SHOWN_BEFORE_CUT = 65536
#: How a stop line says the journal's charges stand to the bill, by the overbilled call's kind.
_MAY = "may fall short"
_SHORT = {USAGE_ABOVE: "fall short", None: "fall short", DEARER: _MAY, UNPRICED: _MAY}


def other_model(named: Any, asked: str) -> str | None:
    """The model a reply (or a failed attempt's body) names, where it names another than ``asked``: its text, or
    the JSON of what is no text (a list, an object, a number: no model the price table can price); None where it
    names none (null, absent or blank) or the asked one."""
    if named is None or isinstance(named, str) and (not named.strip() or named == asked):
        return None
    if isinstance(named, str):
        return named
    try:
        return json.dumps(named)[:SHOWN_BEFORE_CUT]
    except (TypeError, ValueError, RecursionError):  # (a reply's JSON is plain data; kept safe all the same)
        return repr(type(named))


def overbilled_stop(record: dict[str, Any], earlier: bool) -> str:
    """Why a run makes no further call after the overbilled ``record`` (``earlier``: made by an earlier run in the
    folder), by its ``overbilled_kind``: usage reported above the call's worst case (a journal written before the
    kinds: that), another model answering that the price table prices dearer, or one it does not price."""
    call = f"{record['config']} on {record['instance']}"
    kind = record.get("overbilled_kind", USAGE_ABOVE)
    if kind in (DEARER, UNPRICED):
        said = (f"{'an earlier run in this folder: ' if earlier else ''}"
                f"{another_model(f'{call} was answered by', kind)} ({record['overbilled']}); ")
        return said + ("a provider bills at the answering model's price" if kind == DEARER else
                       "give that model a price in the config's prices, as the provider bills it (calls.jsonl "
                       "records its name as served_model)")
    where = "an earlier run in this folder had usage reported" if earlier else "the endpoint reported usage"
    return (f"{where} above the worst case {call} was admitted at ({record['overbilled']}); a provider bills "
            "what it reports")


class Caller:
    """Makes calls concurrently under the budget, journals them, and hands results back by key."""

    def __init__(self, cfg: LiveConfig, task: Task, client: ChatClient | None, journal: Journal, logs: LogFile,
                 budget: float | None, progress: Callable[[float], None]) -> None:
        self.cfg, self.task, self.client, self.journal, self.logs = cfg, task, client, journal, logs
        self.budget = budget  # in the cost unit
        self.tariffs = {c.name: tariff(cfg.terms, c.model) for c in cfg.configurations}
        self.spent = journal.total_charged()  # every charge in the journal, lost calls included, then each new one
        self.reserved = 0.0  # worst cases of the attempts in flight
        self._lock = threading.Lock()
        self.in_flight: dict[Future, tuple[str, list[float]]] = {}
        self.results: dict[str, dict[str, Any]] = {}
        self.pool = ThreadPoolExecutor(max_workers=cfg.endpoint.concurrency)
        self.progress = progress
        self.made = 0
        self.failures: dict[str, int] = {}  # configuration -> consecutive failed calls made in this run
        self.unreached = 0  # consecutive calls (any configurations) none of whose attempts reached the endpoint
        self.failure_stop = ""
        self.overbilled = ""  # why the run makes no further call: a reply billed above its worst case
        earlier = next((r for r in journal.records if r.get("overbilled")), None)
        if earlier is not None:  # the journal's charges fall short of what the provider billed: no call in this folder
            short = _SHORT.get(earlier.get("overbilled_kind"), _MAY)
            self.overbilled = self.failure_stop = (
                overbilled_stop(earlier, True) + f", so the journal's charges {short} of the bill, and no further "
                "call is made here")
        self.stopping = threading.Event()  # set when the run stops: calls in flight make no further attempt
        self.model_of = {c.name: c.model for c in cfg.configurations}
        self.answered: set[str] = set()  # models a call of this run has answered within its worst case

    def _body(self, config: Configuration, instance: Instance) -> dict[str, Any]:
        return {"model": config.model, "messages": self.task.messages(instance, config.prompting),
                "temperature": config.temperature, "max_tokens": config.max_tokens}

    def _priced(self, served: Any, asked: str, rate: Tariff) -> Tariff | None:
        """The tariff (``rate``: the asked model's) a reply or failed attempt naming the model ``served`` is billed
        at, in dollars, or None where the price table does not price it. An entry of its own name (in any case,
        spaces around) prices it. A version (:func:`another_snapshot`) of the asked model, or of a model the table
        prices by its name, is priced as that model, unless a pattern matches the version but not that model
        (``gpt-4o-2024-*``; a default such as ``*`` or ``gpt-4o*`` matches both). Else the table's price."""
        if served is not None and not isinstance(served, str):  # a list, an object: no model a price names
            return None
        served = other_model(served, asked)
        if served is None:
            return rate
        terms = self.cfg.terms
        name = served.strip().casefold()
        own = next((p for p in terms.prices if p.pattern.strip().casefold() == name), None)
        if own is not None:
            return tariff(terms, own.pattern)
        named = [p.pattern for p in terms.prices if not any(c in p.pattern for c in "*?[")]  # models priced by name
        base = next((m for m in (asked, *named) if another_snapshot(served, m)), None)
        if base is not None:  # a version: a pattern for versions only, matched as versions are, else its model's
            folded = base.strip().casefold()
            version = next((p for p in terms.prices if fnmatch.fnmatchcase(name, p.pattern.strip().casefold())
                            and not fnmatch.fnmatchcase(folded, p.pattern.strip().casefold())), None)
            if version is not None:
                return tariff(terms, version.pattern)
            return tariff(terms, base)  # (the asked model's: ``rate``)
        return tariff(terms, served) if terms.price(served) is not None else None

    def _shown_model(self, served: str) -> str:
        """A model's name as the endpoint wrote it, redacted (read on its first :data:`SHOWN_BEFORE_CUT`
        characters), then cut to 200 characters: cut first, a key starting near the cut would leave a piece too
        short to be known as the key's."""
        assert self.client is not None
        return self.client.redact(served[:SHOWN_BEFORE_CUT])[:200]

    def _call(self, key: str, config: Configuration, instance: Instance, occurrence: int, bound: Bound,
              worst_counts: tuple[float, float], held: list[float]) -> dict[str, Any]:
        assert self.client is not None
        rate = self.tariffs[config.name]
        worst = rate.cost(*worst_counts)

        def admit() -> bool:  # a retry after a billable attempt: reserve its worst case, or stop
            if self.cfg.endpoint.charge_failed == "none":
                return True  # failed attempts cost nothing: the call's first reservation covers it
            if not self._reserve(worst):
                return False
            with self._lock:
                held[0] += worst
            self.journal.start(key, config.name, instance.id, worst, sum(worst_counts))
            return True

        def refuse(last: Attempt) -> str:  # a retry after an attempt by a model that may bill beyond the worst case
            if rate.unit != "usd" or self.cfg.endpoint.charge_failed == "none":  # (none: failed attempts are free)
                return ""
            served = self._priced(last.served_model, config.model, rate)
            if served is not None and not served.cost(*served.worst(bound)) > worst:
                return ""
            return (another_model("the attempt's reply named", DEARER if served else UNPRICED)
                    + ": asked again, it could bill beyond the worst case")

        outcome = self.client.chat(self._body(config, instance), admit, self.stopping, refuse)
        paid, seconds = charge(outcome, config.max_tokens, worst_counts, rate, self.cfg.endpoint.charge_failed,
                               self.cfg.latency, bound)
        served = other_model(outcome.served_model, config.model)  # the reply's model, where another than asked
        if rate.unit == "usd":  # (token counts are the same whichever model answers)
            paid = at_served_price(paid, outcome, rate, worst_counts, bound,
                                   lambda m: self._priced(m, config.model, rate))
        record: dict[str, Any] = {
            "key": key, "config": config.name, "model": config.model, "temperature": config.temperature,
            "max_tokens": config.max_tokens, "prompting": config.prompting, "instance": instance.id,
            "occurrence": occurrence, "ok": paid.usage is not None,
            "attempts": [{"status": a.status, "seconds": a.seconds, "billable": a.billable,
                          **({"served_model": self._shown_model(other)}
                             if (other := other_model(a.served_model, config.model)) else {})}
                         for a in outcome.attempts],
            "finished": datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds"),
            "worst": worst, "charged": paid.charged_cost(rate), "charged_tokens": paid.charged_tokens(),
        }
        if served is not None:  # a gateway's fallback or route: recorded, as the endpoint wrote it (redacted)
            record["served_model"] = self._shown_model(served)
        if paid.suspect:
            record["suspect"] = self.client.redact(paid.suspect)
        if paid.overbilled:
            record["overbilled"] = self.client.redact(paid.overbilled)
            record["overbilled_cost"] = paid.billed_over
            record["overbilled_kind"] = paid.overbilled_kind
        if paid.usage is not None:
            prompt, completion = paid.usage
            record.update({"correct": self.task.score(instance, outcome.reply), "latency_s": seconds,
                           "measured_latency_s": outcome.latency_s, "prompt_tokens": prompt,
                           "completion_tokens": completion, "tokens": prompt + completion,
                           "cost": paid.cost(rate),
                           "reply": self.client.redact(outcome.reply[:SHOWN_BEFORE_CUT])[:2000]})
        else:
            record.update({"error": self.client.redact(paid.error), "tokens": 0.0})
        return record

    def worst_case(self, config: Configuration, instance: Instance) -> tuple[Bound, tuple[float, float], float]:
        """A call's token bounds (:meth:`Task.worst_case`), their costliest split at its configuration's tariff, and
        that split's cost in the cost unit: what the budget admits the call at."""
        bound = self.task.worst_case(instance, config.prompting, config.max_tokens, config.model, config.temperature)
        counts = self.tariffs[config.name].worst(bound)
        return bound, counts, self.tariffs[config.name].cost(*counts)

    def _reserve(self, worst: float) -> bool:
        """Reserve ``worst`` if the charges, the reservations in flight and ``worst`` fit the budget (one step)."""
        with self._lock:
            if self.budget is not None and self.spent + self.reserved + worst > self.budget:
                return False
            self.reserved += worst
            return True

    def submit(self, key: str, config: Configuration, instance: Instance, occurrence: int,
               retry_failed: bool = False) -> None:
        """Start (or take from the journal) one call; raise :class:`BudgetStop` if it cannot fit and
        :class:`FailureStop` once a configuration has failed ``max_failures`` times in a row.

        ``retry_failed``: a call the journal records as failed is made again (profiling and collect,
        where every call is needed); the method's calls keep their journaled outcome, failed or not, so
        that a resumed run asks the same calls in the same order. A call lost to a kill is always made
        again. What earlier attempts of a call cost stays charged.
        """
        done = self.journal.done.get(key)
        if done is not None:
            if (done["config"], done["instance"]) != (config.name, instance.id):
                raise CabenchError(f"{self.journal.path}: call {key} was {done['config']} on {done['instance']}, "
                                   f"now {config.name} on {instance.id}; this folder holds another run (its method, "
                                   "the method's code or its config changed since): restore what changed to resume "
                                   "the calls paid here, or pass another --out to run anew")
            if done.get("ok") or not (retry_failed or done.get("lost")):
                self.results[key] = done
                return
        if self.failure_stop:
            raise FailureStop(self.failure_stop)
        bound, worst_counts, worst = self.worst_case(config, instance)
        if self.client is None:
            raise CabenchError("no endpoint to call")
        first = config.model not in self.answered  # made alone, the calls before it answered and none beside it: an
        if first and self.in_flight:  # endpoint billing above the worst case is found by one call, not `concurrency`
            self.drain()
            if self.failure_stop:
                raise FailureStop(self.failure_stop)
        if not self._reserve(worst):
            self.drain()  # decide on the exact spend: independent of timing
            if self.failure_stop:
                raise FailureStop(self.failure_stop)
            if not self._reserve(worst):
                raise BudgetStop(key)
        self.journal.start(key, config.name, instance.id, worst, sum(worst_counts))
        held = [worst]
        future = self.pool.submit(self._call, key, config, instance, occurrence, bound, worst_counts, held)
        self.in_flight[future] = (key, held)
        if first:
            self.drain()

    def wait_one(self) -> None:
        if not self.in_flight:
            return
        finished, _ = wait(list(self.in_flight), return_when=FIRST_COMPLETED)
        for future in finished:
            key, held = self.in_flight.pop(future)
            record = future.result()
            if record.get("overbilled"):  # the calls in flight make no further attempt: a retry could be billed
                self.stopping.set()  # so too (set before it is journaled, so that what the journal shows holds)
            with self._lock:  # the reservation becomes the charge in one step
                self.reserved -= held[0]
                self.spent += record["charged"]
            self.journal.record(record)
            if record["ok"]:
                self.logs.append(record)
                if not record.get("overbilled"):
                    self.answered.add(self.model_of[record["config"]])
            self.made += 1
            self.results[key] = record
            self.progress(self.spent)
            self._count_failure(record)
            if record.get("overbilled") and not self.overbilled:  # no new call: the next could pass the budget
                # said first, before a stop for failures in a row that came with it (that one is said after)
                self.overbilled = (overbilled_stop(record, False) + ", so a further call could pass the budget, and "
                                   "none was made")
                self.failure_stop = self.overbilled + (f"; also {self.failure_stop}" if self.failure_stop else "")

    def _count_failure(self, record: dict[str, Any]) -> None:
        """Stop after ``max_failures`` failed calls of one configuration in a row, or as many calls in a row, of
        any configurations, that never reached the endpoint (every attempt failed to connect): an endpoint that is
        down fails every configuration, and profiling asks each in turn, so the first rule alone would wait for
        ``max_failures`` rounds of every configuration."""
        name = record["config"]
        self.failures[name] = 0 if record["ok"] else self.failures.get(name, 0) + 1
        attempts = record.get("attempts") or []
        unreached = not record["ok"] and bool(attempts) and all(
            a["status"] == "connection" and not a["billable"] for a in attempts)
        self.unreached = self.unreached + 1 if unreached else 0
        limit = self.cfg.endpoint.max_failures
        if self.failures[name] >= limit and not self.failure_stop:
            self.failure_stop = (f"{limit} calls of {name} failed in a row (the last: "
                                 f"{str(record.get('error'))[:120]})")
        elif self.unreached >= limit and not self.failure_stop:
            self.failure_stop = (f"{limit} calls in a row could not reach the endpoint (the last, {name}: "
                                 f"{str(record.get('error'))[:120]})")

    def drain(self) -> None:
        while self.in_flight:
            self.wait_one()

    def stop(self) -> None:
        """The run is stopping: each call in flight ends after the attempt under way (no retry, no backoff)."""
        self.stopping.set()

    def take(self, key: str) -> dict[str, Any]:
        """The result of ``key``, which has finished (KeyError otherwise)."""
        return self.results.pop(key)

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)

