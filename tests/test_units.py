"""Amounts as sentences say them (cabench.units.amount): tokens whole, dollars in cents from $1 on and in four
significant digits below — never a rounded "$1" beside a budget of "$1.00"."""

from __future__ import annotations

import pytest

from cabench.units import amount


@pytest.mark.parametrize("value, unit, text", [
    (12345.4, "tokens", "12,345 tokens"),
    (1234.5, "usd", "$1,234.50"),
    (1.0, "usd", "$1.00"),
    (0.99999, "usd", "$1.00"),  # four significant digits round it up to one dollar: said in cents, as $1 is
    (0.99994, "usd", "$0.9999"),
    (0.0123456, "usd", "$0.01235"),
])
def test_amounts(value, unit, text):
    assert amount(value, unit) == text
