"""What a live call costs against the budget: usage validated before it is counted.

An endpoint's ``usage`` is a claim. It is counted only when it is a plausible
count: ``prompt_tokens`` and ``completion_tokens`` whole numbers, finite and
not negative (the completion read as the most the usage says was generated:
:func:`billed_completion`), completion tokens within the request's ``max_tokens`` and their
cost in the cost unit (:mod:`cabench.live.tariff`: tokens, completion tokens or
dollars) within the call's worst case (the costliest split of
:meth:`Task.worst_case`). Anything else makes the call *suspect*: it is charged
its worst case (never more: the worst case is what the budget admitted the call
at, so what is charged never passes the budget, whatever the endpoint reports;
the reported count stays in ``calls.jsonl``), is not an outcome for the method,
and the run says so. A reply (or failed attempt) whose usage costs more than
that worst case is marked ``overbilled`` (:func:`billed_above`): a provider
bills what it reports, so the caller makes no further call. Reasons name an
endpoint's values only when they are numbers: its text may hold anything, the
key included. Every charge is a (prompt, completion) count, so the run knows
what it paid in the cost unit and in tokens.

A failed attempt is charged by ``endpoint.charge_failed``:

* ``worst-case`` (the default): the usage its reply reports, or its worst case
  without one, since a provider may bill a reply it did not deliver;
* ``reported``: the usage its reply reports, or nothing;
* ``none``: nothing.

An attempt that could not connect and a 429 (refused before any generation)
are never charged. So a failing endpoint can never spend past the budget: each
attempt is admitted against the budget at its worst case before it is made.

A reply delivered without a usage count (or with one of zero tokens) is no
failed attempt: the endpoint generated it, and a provider bills it whatever its
body says, so it is charged its worst case under every ``charge_failed``. So is
a reply delivered but unread (:data:`DELIVERED`: a body that is no reply, or
one too large).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from cabench.live.client import UNREAD, Attempt, Outcome
from cabench.live.tariff import Tariff
from cabench.live.tasks import Bound
from cabench.units import amount

CHARGE_FAILED = ("worst-case", "reported", "none")
Counts = tuple[float, float]  # (prompt, completion) tokens
NOTHING: Counts = (0.0, 0.0)


@dataclass(frozen=True)
class Charge:
    """A call's cost: ``usage`` (the outcome's counts, None when the call is no outcome), ``charged`` (every
    attempt's counts, what the budget pays) and ``suspect`` (why the endpoint's claims were not believed)."""

    usage: Counts | None
    charged: tuple[Counts, ...]
    suspect: str = ""
    error: str = ""
    overbilled: str = ""  # why the call may be billed above what it was charged (the run makes no further call)
    billed_over: float = 0.0  # what the overbilled attempts' reported usage costs (a provider bills it)
    overbilled_kind: str = ""  # :data:`USAGE_ABOVE`, :data:`DEARER` or :data:`UNPRICED` (the stop line says it so)

    def cost(self, tariff: Tariff) -> float | None:
        """The outcome's cost in the tariff's unit (None when the call is no outcome)."""
        return None if self.usage is None else tariff.cost(*self.usage)

    def charged_cost(self, tariff: Tariff) -> float:
        """What every attempt cost against the budget, in the tariff's unit."""
        return float(sum(tariff.cost(*counts) for counts in self.charged))

    def charged_tokens(self) -> float:
        """What every attempt cost, counted in tokens."""
        return float(sum(p + c for p, c in self.charged))


MAX_COUNT = 1e15  # a token count or a latency beyond this is no measurement (and could not be summed exactly)
LATENCY_S = (1e-6, 1e7)  # a reported latency is a duration in this range, as in a dataset's logs


def _number(value: Any) -> float | None:
    """``value`` as a float when it is a JSON number of plausible size, else None (never raises)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if abs(value) > MAX_COUNT:  # NaN passes here and fails every later check
        return None
    return float(value)


def _shown(value: Any) -> str:
    """How a reason names an endpoint's value: a number as written, anything else by its JSON kind only (an
    endpoint's text may hold anything, the key included)."""
    number = _number(value)
    if number is not None:
        return f"{number:.6g}"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"a {len(str(abs(value)))}-digit number"
    kind = {str: "text", list: "a list", dict: "an object", bool: "true/false"}.get(type(value), "not a number")
    return kind


#: A count is not believed past ``FAR_ABOVE`` times its bound plus ``SLACK_TOKENS``: a provider may add tokens the
#: request does not show (a default system prompt, a date block), which a count a little above the bound is.
FAR_ABOVE, SLACK_TOKENS = 2.0, 1024.0


def usage_counts(usage: Any, max_tokens: int, worst: Counts, tariff: Tariff, bound: Bound | None = None
                 ) -> tuple[Counts | None, str, Counts]:
    """(the prompt and completion tokens ``usage`` counts, or None; why it is not believed; what a suspect call
    is charged).

    ``worst`` is the call's costliest split in ``tariff``. ``(None, "", NOTHING)`` means no usage was reported
    at all (or zero tokens). A suspect call is charged its worst case, also when the reported count costs more:
    the worst case bounds the prompt by its bytes, so a count above it is no byte-level tokenizer's, and the
    budget admitted the call at its worst case. ``bound`` (the call's :meth:`Task.worst_case`) bounds each count
    too, whatever the tariff charges: a prompt count above the prompt's bytes is no tokenizer's even where prompt
    tokens cost nothing (``cost: completion``), and such counts would be logged and replayed as the call's tokens.
    """
    if usage is None:
        return None, "", NOTHING
    if not isinstance(usage, dict):
        return None, f"usage is a JSON {type(usage).__name__}, not an object", worst
    counts = {}
    for name in ("prompt_tokens", "completion_tokens"):
        value = usage.get(name)
        number = _number(value)
        if value is None:
            return None, f"usage.{name} is missing", worst
        if number is None or not math.isfinite(number) or number < 0 or number != math.floor(number):
            return None, f"usage.{name} is {_shown(value)}, not a count of tokens", worst
        counts[name] = number
    said = counts["completion_tokens"]
    counts["completion_tokens"] = billed_completion(usage, counts["prompt_tokens"], said)
    if counts["completion_tokens"] > max_tokens:
        done = counts["completion_tokens"]
        what = "usage.completion_tokens" if done == said else "the usage's completion (its total or reasoning tokens)"
        return None, f"{what} {done:.0f} is above max_tokens {max_tokens}", worst
    claimed = (counts["prompt_tokens"], counts["completion_tokens"])
    cost, most = tariff.cost(*claimed), tariff.cost(*worst)
    if cost > most:
        return None, (f"{amount(cost, tariff.unit)} reported, above the call's worst case "
                      f"{amount(most, tariff.unit)}; charged its worst case"), worst
    for what, count, most_tokens in (("usage.prompt_tokens", claimed[0], bound.prompt if bound else math.inf),
                                     ("the usage's total", sum(claimed), bound.total if bound else math.inf)):
        if count > FAR_ABOVE * most_tokens + SLACK_TOKENS:
            return None, (f"{what} {count:.0f} is far above the call's bound of {most_tokens:.0f} tokens; charged "
                          "its worst case"), worst
    if sum(claimed) <= 0:
        return None, "", NOTHING
    return claimed, "", claimed


def billed_above(usage: Any, worst: Counts, tariff: Tariff) -> tuple[str, float]:
    """Why ``usage``, where it is a count of tokens, costs more in ``tariff`` than the worst case ``worst`` the call
    was admitted at (a provider bills what it reports, believed or not), and what it costs; ``("", 0.0)``
    otherwise."""
    counts = _reported(usage)
    if counts is None:
        return "", 0.0
    prompt, completion = counts
    cost, most = tariff.cost(prompt, completion), tariff.cost(*worst)
    if not cost > most:
        return "", 0.0
    return (f"{prompt:.0f} prompt and {completion:.0f} completion tokens reported, {amount(cost, tariff.unit)}, "
            f"above the worst case {amount(most, tariff.unit)}"), float(cost)


#: What follows a model's name in the name of one of its versions: a date (``-2024-07-18``, ``-20241022``,
#: ``@20240620``, ``-0613``), a version number (``-v2``, ``-001``) or ``-latest``; ``o1-pro``, ``gpt-4-32k`` or
#: ``claude-3-5`` is another model.
_VERSION = re.compile(r"[-@](\d{4}-\d{2}-\d{2}|\d{3,4}|\d{6}|\d{8}|v\d{1,3}(\.\d+)*|latest)")


#: The kinds of an overbilled call (``overbilled_kind`` in calls.jsonl; each stop line says its own).
USAGE_ABOVE = "usage"  # the endpoint reported usage that costs more than the call's worst case
DEARER = "dearer"  # another model answered, which the price table prices dearer, beyond the call's worst case
UNPRICED = "unpriced"  # another model answered, which the price table does not price: the bill is unknown
#: How a reason says the answering model's price made it so.
AT_SERVED_PRICE = "at the answering model's price"
#: What the price table says of a model that answered for the one asked, by the overbilled kind it makes.
PRICED = {DEARER: "prices dearer", UNPRICED: "does not price"}


def another_model(who: str, kind: str) -> str:
    """``who`` (the reply, a failed attempt) named another model than the one asked, which the price table prices
    dearer or does not price (``kind``): the reason every stop line and suspicion of it gives."""
    return f"{who} another model than the one asked, which the price table {PRICED[kind]}"


def another_snapshot(served: str, asked: str) -> bool:
    """Whether the reply's model ``served`` names the model ``asked`` itself, in another case or as one of its
    versions (``gpt-4o-mini-2024-07-18`` for ``gpt-4o-mini``, as providers answer), not another model."""
    served, asked = served.strip().lower(), asked.strip().lower()
    return served == asked or (served.startswith(asked) and _VERSION.fullmatch(served[len(asked):]) is not None)


def at_served_price(paid: Charge, outcome: Outcome, rate: Tariff, worst: Counts, bound: Bound,
                    priced: Callable[[Any], Tariff | None]) -> Charge:
    """``paid`` with every charged attempt whose reply names another model than the one asked priced at that
    model's price: a gateway's fallback bills at the answering model's price, whether its reply arrived or failed.

    ``priced(model)`` is the tariff a reply naming ``model`` is billed at (``rate`` for the asked model or a version
    of it priced as asked), None where the price table does not price it. Where it is dearer than ``rate`` on
    prompt or completion tokens, or unpriced, the attempt is charged its worst case (``worst``, which the call was
    admitted at); a reply so named is no outcome (another model's answer). What it bills there is its usage as
    reported (a count above zero), else at most its worst case at that price within ``bound``. Where that passes
    the worst case it was admitted at, or cannot be known (no price), the call is marked ``overbilled`` (the run
    makes no further call) and what its reported usage costs at that price replaces its cost at the asked price
    in ``billed_over``. An attempt charged nothing (``charge_failed: none``, or one known to be free) is the
    config's word that it costs nothing. The model's name is the endpoint's text, never in a reason (it is
    recorded apart, redacted)."""
    replies = [(a.usage, a.served_model, f"a failed attempt ({a.status})") for a in outcome.failed]
    if outcome.ok:
        replies.append((outcome.usage, outcome.served_model, "the reply"))
    charged, admitted = list(paid.charged), rate.cost(*worst)
    out = paid
    for i, (usage, model, who) in enumerate(replies):
        served = priced(model)
        if charged[i] == NOTHING or (served is not None and served.prompt <= rate.prompt
                                     and served.completion <= rate.completion):
            continue  # charged nothing, or billed no dearer than the asked model's price
        charged[i] = worst
        why = another_model(f"{who} names", DEARER if served else UNPRICED)
        out = replace(out, suspect="; ".join(filter(None, [out.suspect, why])))
        if who == "the reply":
            out = replace(out, usage=None, error=f"suspect reply: {why}")
        reported = _reported(usage)
        if served is None:
            said = "reported usage" if reported else "no usage reported"
            over, kind, bill = f"{who}: {said}, by a model the price table {PRICED[UNPRICED]}: its bill is unknown", \
                UNPRICED, 0.0
        else:
            bill = served.cost(*(reported or served.worst(bound)))
            if not bill > admitted:
                continue
            said = (f"{reported[0]:.0f} prompt and {reported[1]:.0f} completion tokens reported, costing"
                    if reported else "no usage reported, its worst case costing")
            over, kind = (f"{who}: {said} {amount(bill, rate.unit)} {AT_SERVED_PRICE}, above the worst case "
                          f"{amount(admitted, rate.unit)}"), DEARER
            bill = bill if reported else 0.0  # (an estimate is no reported usage)
        counted = billed_above(usage, worst, rate)[1]  # its usage's cost at the asked price, if counted already
        said_first = not out.overbilled or out.overbilled_kind == USAGE_ABOVE  # (the answering model's price said)
        out = replace(out, overbilled=over if said_first else out.overbilled,
                      overbilled_kind=kind if said_first else out.overbilled_kind,
                      billed_over=out.billed_over - counted + bill)  # (an unknown bill: nothing)
    return replace(out, charged=tuple(charged))


def _reported(usage: Any) -> Counts | None:
    """The prompt and completion tokens ``usage`` counts (:func:`billed_completion`), where it is a count of both
    (finite, not negative) above zero in all: what a provider bills by."""
    if not isinstance(usage, dict):
        return None
    prompt, completion = (_number(usage.get(name)) for name in ("prompt_tokens", "completion_tokens"))
    if prompt is None or completion is None or not all(math.isfinite(c) and c >= 0 for c in (prompt, completion)):
        return None
    completion = billed_completion(usage, prompt, completion)
    return (prompt, completion) if prompt + completion > 0 else None


def billed_completion(usage: dict[str, Any], prompt: float, completion: float) -> float:
    """The completion tokens a provider bills for ``usage``: its ``completion_tokens``, or more where its own
    ``total_tokens`` less the ``prompt`` counts more, or where ``completion_tokens_details.reasoning_tokens`` is
    above the completion (which then cannot hold them: they are added to it), rounded up. Gateways passing a
    thinking model through have reported its reasoning tokens there alone, with a completion of 0 or 1, and the
    provider bills them; an honest usage (total = prompt + completion, reasoning within the completion) reads as
    it is. A value that is no finite number is left out."""
    details = usage.get("completion_tokens_details")
    total = _number(usage.get("total_tokens"))
    reasoning = _number(details.get("reasoning_tokens")) if isinstance(details, dict) else None
    more = [math.ceil(total - prompt)] if total is not None and math.isfinite(total) else []
    if reasoning is not None and math.isfinite(reasoning) and reasoning > completion:
        more.append(math.ceil(completion + reasoning))
    return completion if max(more, default=completion) <= completion else float(max(more))  # (a count as read)


def reported_latency(value: Any) -> tuple[float | None, str]:
    """A reported latency in seconds, or None and why it is not believed (``value`` None: the reply reports
    none, and a latency measured instead would mix two kinds of latency in one objective)."""
    if value is None:
        return None, "the reply reports no latency (its 'cabench.latency_s', which latency: reported reads)"
    number = _number(value)
    if number is None or not LATENCY_S[0] <= number <= LATENCY_S[1]:  # NaN fails both comparisons
        return None, f"the reported latency is {_shown(value)}, not a duration in seconds"
    return number, ""


#: Attempts whose reply (HTTP 200) arrived but could not be read: a body that is no reply (or reports its usage
#: where cabench does not read it, as a stream's last chunk), one larger than ``max_reply_bytes``, or one cut short
#: (the connection dropped, or the read timed out, after the 200). The endpoint
#: generated them and a provider bills them: each is charged its worst case whatever ``charge_failed`` says.
DELIVERED = {status: {"malformed": "a malformed reply", "too large": "a reply larger than max_reply_bytes",
                      "cut short": "a reply cut short"}[status] for status in UNREAD}


def _failed_attempt(attempt: Attempt, max_tokens: int, worst: Counts, tariff: Tariff,
                    mode: str, bound: Bound | None = None) -> tuple[Counts, str]:
    """(charge, suspect reason) of a failed attempt."""
    delivered = attempt.status in DELIVERED
    if not attempt.billable or (mode == "none" and not delivered):
        return NOTHING, ""
    counts, why, claimed = usage_counts(attempt.usage, max_tokens, worst, tariff, bound)
    suspect = f"{attempt.status}: {why}" if why else DELIVERED.get(attempt.status, "")
    if counts is not None and not delivered:  # (an unread reply's usage, read where it could be, is not believed)
        return counts, suspect
    if why:
        return claimed, suspect
    return (worst if mode == "worst-case" or delivered else NOTHING), suspect


def charge(outcome: Outcome, max_tokens: int, worst: Counts, tariff: Tariff, mode: str,
           latency: str = "measured", bound: Bound | None = None) -> tuple[Charge, float]:
    """The :class:`Charge` of a finished call and the latency (seconds) to log for it; ``worst`` is the call's
    costliest split in ``tariff`` (:meth:`Tariff.worst`) of its ``bound`` (:meth:`Task.worst_case`)."""
    above = [billed_above(a.usage, worst, tariff) for a in outcome.failed  # (an unread reply is billed in every mode)
             if a.billable and (mode != "none" or a.status in DELIVERED)]
    above.append(billed_above(outcome.usage, worst, tariff) if outcome.ok else ("", 0.0))
    over = next((why for why, _ in above if why), "")
    paid, seconds = _charge(outcome, max_tokens, worst, tariff, mode, latency, bound)
    return (replace(paid, overbilled=over, billed_over=sum(cost for _, cost in above), overbilled_kind=USAGE_ABOVE)
            if over else paid), seconds


def _charge(outcome: Outcome, max_tokens: int, worst: Counts, tariff: Tariff, mode: str, latency: str,
            bound: Bound | None) -> tuple[Charge, float]:
    """:func:`charge` but for the overbilling."""
    charged: list[Counts] = []
    suspects: list[str] = []
    for attempt in outcome.failed:
        counts, why = _failed_attempt(attempt, max_tokens, worst, tariff, mode, bound)
        charged.append(counts)
        if why:
            suspects.append(why)
    if not outcome.ok:
        return Charge(None, tuple(charged), "; ".join(suspects), outcome.error or outcome.stopped), 0.0
    seconds = outcome.latency_s
    usage, why, claimed = usage_counts(outcome.usage, max_tokens, worst, tariff, bound)
    if why:
        suspects.append(why)
        return Charge(None, (*charged, claimed), "; ".join(suspects), f"suspect reply: {why}"), 0.0
    if usage is None:  # delivered, so generated and billed: charged as the budget admitted it, whatever the mode
        return Charge(None, (*charged, worst), "; ".join(suspects), "the endpoint reported no token usage"), 0.0
    if latency == "reported":
        value, why = reported_latency(outcome.reported_latency_s)
        if value is None:  # the usage is believable and charged; the outcome is not
            suspects.append(why)
            return Charge(None, (*charged, usage), "; ".join(suspects), f"suspect reply: {why}"), 0.0
        seconds = value
    return Charge(usage, (*charged, usage), "; ".join(suspects)), seconds
