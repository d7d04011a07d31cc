"""What a live call costs in the declared cost unit: a rate per prompt token and one per completion token.

Every cost unit (:mod:`cabench.data.terms`) is linear in a call's usage: ``tokens`` counts both (rates 1 and
1), ``completion_tokens`` the completion only (0 and 1), ``usd`` prices them by the configuration's model (its
``input`` and ``output`` dollars per million tokens, or one blended ``tokens`` rate on both). A call's worst case
is the split of its token bounds (:class:`cabench.live.tasks.Bound`) that costs most: for a prompt of at most
``P`` tokens and ``max_tokens`` ``M``, ``P * input + M * output``.
"""

from __future__ import annotations

from dataclasses import dataclass

from cabench.data.terms import Terms
from cabench.live.tasks import Bound

PER_MILLION = 1e6  # prices are dollars per million tokens


@dataclass(frozen=True)
class Tariff:
    """A call's cost in ``unit``: ``prompt`` per prompt token plus ``completion`` per completion token."""

    unit: str
    prompt: float
    completion: float

    def cost(self, prompt_tokens: float, completion_tokens: float) -> float:
        return prompt_tokens * self.prompt + completion_tokens * self.completion

    def worst(self, bound: Bound) -> tuple[float, float]:
        """The (prompt, completion) tokens within ``bound`` that cost most: the dearer side up to its bound (and
        the total's), then the other side up to its bound and what the total leaves."""
        if self.completion >= self.prompt:
            completion = min(bound.completion, bound.total)
            return min(bound.prompt, bound.total - completion), completion
        prompt = min(bound.prompt, bound.total)
        return prompt, min(bound.completion, bound.total - prompt)


def tariff(terms: Terms, model: str) -> Tariff:
    """The tariff of ``model``'s calls in ``terms.cost`` (in dollars, its price: the live config checked that
    every configuration's model has one)."""
    if terms.cost == "tokens":
        return Tariff("tokens", 1.0, 1.0)
    if terms.cost == "completion_tokens":
        return Tariff("completion_tokens", 0.0, 1.0)
    price = terms.price(model)
    if price is None:
        raise ValueError(f"no price for model {model!r}")
    if price.tokens is not None:
        return Tariff("usd", price.tokens / PER_MILLION, price.tokens / PER_MILLION)
    return Tariff("usd", float(price.input or 0.0) / PER_MILLION, float(price.output or 0.0) / PER_MILLION)
