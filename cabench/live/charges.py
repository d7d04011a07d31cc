"""What a live call costs against the budget: usage validated before it is counted.

An endpoint's ``usage`` is a claim. It is counted only when it is a plausible
count: ``prompt_tokens`` and ``completion_tokens`` whole numbers, finite and
not negative, completion tokens within the request's ``max_tokens`` and the
counted tokens within the call's worst case (:meth:`Task.worst_case_tokens`).
Anything else makes the call *suspect*: it is charged its worst case (never
less than nothing; the reported count when that is a plausible count above the
worst case, the prompt having outgrown the estimate), is not an outcome for the
method, and the run says so. Reasons name an endpoint's values only when they
are numbers: its text may hold anything, the key included.

A failed attempt is charged by ``endpoint.charge_failed``:

* ``worst-case`` (the default): the usage its reply reports, or its worst case
  without one, since a provider may bill a reply it did not deliver;
* ``reported``: the usage its reply reports, or nothing;
* ``none``: nothing.

An attempt that could not connect and a 429 (refused before any generation)
are never charged. So a failing endpoint can never spend past the budget: each
attempt is admitted against the budget at its worst case before it is made.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from cabench.live.client import Attempt, Outcome

CHARGE_FAILED = ("worst-case", "reported", "none")


@dataclass(frozen=True)
class Charge:
    """A call's cost: ``tokens`` (the outcome's cost, None when the call is no outcome), ``charged`` (every
    attempt's charge, what the budget pays) and ``suspect`` (why the endpoint's claims were not believed)."""

    tokens: float | None
    charged: float
    suspect: str = ""
    error: str = ""


MAX_COUNT = 1e15  # a token count or a latency beyond this is no measurement (and could not be summed exactly)
LATENCY_S = (1e-6, 1e7)  # a reported latency is a duration in this range, as in a dataset's logs


def _number(value: Any) -> float | None:
    """``value`` as a float when it is a JSON number of plausible size, else None (never raises)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int) and abs(value) > MAX_COUNT:
        return None
    return float(value)


def _shown(value: Any) -> str:
    """How a reason names an endpoint's value: a number as written, anything else by its JSON kind only (an
    endpoint's text may hold anything, the key included)."""
    number = _number(value)
    if number is not None:
        return f"{number:.6g}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"a {len(str(abs(value)))}-digit number"
    kind = {str: "text", list: "a list", dict: "an object", bool: "true/false"}.get(type(value), "not a number")
    return kind


def usage_tokens(usage: Any, max_tokens: int, worst: float, cost: str) -> tuple[float | None, str, float]:
    """(the tokens ``usage`` counts, or None; why it is not believed; what a suspect call is charged).

    ``cost`` is ``total`` or ``completion``. ``(None, "", 0)`` means no usage was reported at all (or zero
    tokens). A suspect call is charged its worst case, or the reported count when that is a plausible count
    above the worst case (completion tokens within ``max_tokens``: the prompt outgrew the estimate).
    """
    if usage is None:
        return None, "", 0.0
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
    if counts["completion_tokens"] > max_tokens:
        done = counts["completion_tokens"]
        return None, f"usage.completion_tokens {done:.0f} is above max_tokens {max_tokens}", worst
    tokens = counts["completion_tokens"] if cost == "completion" else sum(counts.values())
    if tokens > worst:
        return None, (f"{tokens:.0f} tokens reported, above the call's worst case {worst:.0f}; charged as "
                      "reported"), tokens
    if tokens <= 0:
        return None, "", 0.0
    return tokens, "", tokens


def reported_latency(value: Any) -> tuple[float | None, str]:
    """A reported latency in seconds, or None and why it is not believed."""
    number = _number(value)
    if number is None or not LATENCY_S[0] <= number <= LATENCY_S[1]:  # NaN fails both comparisons
        return None, f"the reported latency is {_shown(value)}, not a duration in seconds"
    return number, ""


def _failed_attempt(attempt: Attempt, max_tokens: int, worst: float, cost: str, mode: str) -> tuple[float, str]:
    """(charge, suspect reason) of a failed attempt."""
    if not attempt.billable or mode == "none":
        return 0.0, ""
    tokens, why, claimed = usage_tokens(attempt.usage, max_tokens, worst, cost)
    suspect = f"{attempt.status}: {why}" if why else ("a malformed reply" if attempt.status == "malformed" else "")
    if tokens is not None:
        return tokens, suspect
    if why:
        return claimed, suspect
    return (worst if mode == "worst-case" else 0.0), suspect


def charge(outcome: Outcome, max_tokens: int, worst: float, cost: str, mode: str,
           latency: str = "measured") -> tuple[Charge, float]:
    """The :class:`Charge` of a finished call and the latency (seconds) to log for it."""
    charged, suspects = 0.0, []
    attempts = outcome.attempts[:-1] if outcome.ok else outcome.attempts
    for attempt in attempts:
        amount, why = _failed_attempt(attempt, max_tokens, worst, cost, mode)
        charged += amount
        if why:
            suspects.append(why)
    if not outcome.ok:
        return Charge(None, charged, "; ".join(suspects), outcome.error or outcome.stopped), 0.0
    seconds = outcome.latency_s
    tokens, why, claimed = usage_tokens(outcome.usage, max_tokens, worst, cost)
    if why:
        suspects.append(why)
        return Charge(None, charged + claimed, "; ".join(suspects), f"suspect reply: {why}"), 0.0
    if tokens is None:
        empty = worst if mode == "worst-case" else 0.0
        return Charge(None, charged + empty, "; ".join(suspects), "the endpoint reported no token usage"), 0.0
    if latency == "reported" and outcome.reported_latency_s is not None:
        value, why = reported_latency(outcome.reported_latency_s)
        if value is None:  # the usage is believable and charged; the outcome is not
            suspects.append(why)
            return Charge(None, charged + tokens, "; ".join(suspects), f"suspect reply: {why}"), 0.0
        seconds = value
    return Charge(tokens, charged + tokens, "; ".join(suspects)), seconds
