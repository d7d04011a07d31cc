"""What a live call costs against the budget: usage validated before it is counted.

An endpoint's ``usage`` is a claim. It is counted only when it is a plausible
count: ``prompt_tokens`` and ``completion_tokens`` whole numbers, finite and
not negative, completion tokens within the request's ``max_tokens`` and the
counted tokens within the call's worst case (:meth:`Task.worst_case_tokens`).
Anything else makes the call *suspect*: it is charged its worst case (never
less than nothing), is not an outcome for the method, and the run says so.

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


def usage_tokens(usage: Any, max_tokens: int, worst: float, cost: str) -> tuple[float | None, str]:
    """The tokens ``usage`` counts (``cost``: ``total`` or ``completion``), or None and why it is not believed.

    ``(None, "")`` means no usage was reported at all (or zero tokens).
    """
    if usage is None:
        return None, ""
    if not isinstance(usage, dict):
        return None, f"usage is a JSON {type(usage).__name__}, not an object"
    counts = {}
    for name in ("prompt_tokens", "completion_tokens"):
        value = usage.get(name)
        if value is None:
            return None, f"usage.{name} is missing"
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None, f"usage.{name} is {str(value)[:40]!r}, not a number"
        if not math.isfinite(value) or value < 0 or value != math.floor(value):
            return None, f"usage.{name} is {value!r}, not a count of tokens"
        counts[name] = float(value)
    if counts["completion_tokens"] > max_tokens:
        return None, f"usage.completion_tokens {counts['completion_tokens']:.0f} is above max_tokens {max_tokens}"
    tokens = counts["completion_tokens"] if cost == "completion" else sum(counts.values())
    if tokens > worst:
        return None, f"{tokens:.0f} tokens reported, above the call's worst case {worst:.0f}"
    if tokens <= 0:
        return None, ""
    return tokens, ""


def reported_latency(value: Any) -> tuple[float | None, str]:
    """A reported latency in seconds, or None and why it is not believed."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None, f"the reported latency is {str(value)[:40]!r}, not a number"
    if not math.isfinite(value) or value < 0:
        return None, f"the reported latency is {value!r}, not a duration"
    return float(value), ""


def _failed_attempt(attempt: Attempt, max_tokens: int, worst: float, cost: str, mode: str) -> tuple[float, str]:
    """(charge, suspect reason) of a failed attempt."""
    if not attempt.billable or mode == "none":
        return 0.0, ""
    tokens, why = usage_tokens(attempt.usage, max_tokens, worst, cost)
    suspect = f"{attempt.status}: {why}" if why else ("a malformed reply" if attempt.status == "malformed" else "")
    if tokens is not None:
        return tokens, suspect
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
    tokens, why = usage_tokens(outcome.usage, max_tokens, worst, cost)
    if latency == "reported" and outcome.reported_latency_s is not None and not why:
        value, why = reported_latency(outcome.reported_latency_s)
        seconds = value if value is not None else seconds
    if why:
        suspects.append(why)
        return Charge(None, charged + worst, "; ".join(suspects), f"suspect reply: {why}"), 0.0
    if tokens is None:
        empty = worst if mode == "worst-case" else 0.0
        return Charge(None, charged + empty, "; ".join(suspects), "the endpoint reported no token usage"), 0.0
    return Charge(tokens, charged + tokens, "; ".join(suspects)), seconds
