"""Amounts as sentences say them (cabench.units.amount): tokens whole, dollars in cents from $1 on and in four
significant digits below (whole cents as cents: $0.50) — never a rounded "$1" beside a budget of "$1.00"."""

from __future__ import annotations

import pytest

from cabench.units import amount, amount_up, fixed, plain


@pytest.mark.parametrize("value, unit, text", [
    (12345.4, "tokens", "12,345 tokens"),
    (1234.5, "usd", "$1,234.50"),
    (1.0, "usd", "$1.00"),
    (0.99999, "usd", "$1.00"),  # four significant digits round it up to one dollar: said in cents, as $1 is
    (0.99994, "usd", "$0.9999"),
    (0.0123456, "usd", "$0.01235"),
    (0.5, "usd", "$0.50"),  # whole cents in cents below a dollar too, as $2.00 is written: $0.5 beside $2.00 read oddly
    (0.1, "usd", "$0.10"),
    (0.002, "usd", "$0.002"),
    (0.1177, "usd", "$0.1177"),
    (1e-9, "tokens", "1e-09 tokens"),  # a budget below one token said "0 tokens"
    (9.874, "tokens", "9.87 tokens"),
    (9.996, "tokens", "10 tokens"),
    (0.0, "tokens", "0 tokens"),
    (4.222e-05, "usd", "$0.00004222"),  # a price as it reads: "$4.222e-05" beside "$0.0001291" was hard to compare
    (1e-10, "usd", "$1e-10"),  # no price (a budget given to be refused): its exponent whole, not "$1e-1"
])
def test_amounts(value, unit, text):
    assert amount(value, unit) == text


def test_dollars_per_call_are_fixed_with_three_significant_digits():
    """Dollars per call read "$4e-05 ± $8.32e-07" beside "$0.000121": scientific notation for some, fixed for others,
    and trailing zeros dropped. Every one is fixed now, with three significant digits, its interval too."""
    from cabench.report_cells import REAL_UNIT_FORMATS, measurement

    number = REAL_UNIT_FORMATS["usd"][1]
    assert [number.format(v) for v in (4e-05, 0.000121, 0.00377, 1.5, 12.345, 0.0)] == [
        "$0.0000400", "$0.000121", "$0.00377", "$1.50", "$12.3", "$0"]
    assert measurement({"usd": 4e-05, "usd_ci": 8.32e-07}, "usd", number) == "$0.0000400 ± $0.000000832"
    assert fixed(float("nan")) == "nan" and fixed(-0.00012345) == "-0.000123" and fixed(0.0009996) == "0.00100"


def test_token_counts_below_ten_keep_three_significant_digits_with_their_interval():
    """Counts logged in thousands of tokens (0.11-0.31 per call) showed as '0 ± 0 tokens'."""
    from cabench.report_cells import measurement
    from cabench.units import TokenCount

    count = TokenCount("{:,.0f}")
    assert [count.at(v).format(v) for v in (0.1094, 9.87, 10.4, 12345.6)] == ["0.109", "9.87", "10", "12,346"]
    assert measurement({"tokens": 0.1094, "tokens_ci": 0.0015}, "tokens", count) == "0.109 ± 0.0015"
    assert measurement({"tokens": 126.4, "tokens_ci": 2.13}, "tokens", count) == "126 ± 2"  # as before
    interval = {"tokens": 0.2, "tokens_low": 0.1, "tokens_high": 0.25}
    assert measurement(interval, "tokens", count) == "0.200 (0.100–0.250)"
    assert measurement({"tokens": float("nan")}, "tokens", count) == "n/a"


def test_a_mean_beside_its_interval_keeps_its_trailing_zeros():
    """Latency 4.0027 ± 0.183 s read '4 ± 0.183 s' (and 1.5038 '1.5'), as if the mean were known less well than its
    interval; a half-width keeps its own three digits, and no number ends in a point."""
    from cabench.report_cells import measurement
    from cabench.units import Significant

    assert [Significant().format(v) for v in (4.0027, 1.5038, 0.443, 100.0, 12.0, 1234.5)] == [
        "4.00", "1.50", "0.443", "100", "12.0", "1.23e+03"]
    assert measurement({"latency_s": 4.0027, "latency_s_ci": 0.183}, "latency_s", Significant()) == "4.00 ± 0.183"
    assert measurement({"latency_s": 1.5038, "latency_s_ci": 0.1}, "latency_s", Significant()) == "1.50 ± 0.1"


@pytest.mark.parametrize("value, unit", [(0.12341, "tokens"), (9.8712, "tokens"), (9.9991, "tokens"), (1e-9, "tokens"),
                                         (12.2, "tokens"), (0.012341, "usd"), (3.141, "usd"),
                                         (0.013000000000000001, "usd"), (1.1300000000000001, "usd")])  # float steps
def test_an_amount_rounded_up_is_said_as_no_less_than_it_is(value, unit):
    """``amount_up`` rounds to what ``amount`` shows, upwards: the least budget a message asks for is enough."""
    up = amount_up(value, unit)
    assert up >= value
    said = amount(up, unit).replace("$", "").replace(",", "").split()[0]
    assert float(said) == pytest.approx(up, rel=1e-12)
    assert up - value <= 0.011 * max(value, 1e-300) + (1 if unit == "tokens" and value >= 10 else 0)


@pytest.mark.parametrize("value, digits, text", [
    (4e-05, 4, "0.00004"), (4.2219e-05, 4, "0.00004222"), (5.0, 4, "5"), (123456.7, 4, "123500"),
    (0.5, 4, "0.5"), (4.2219e-05, 12, "0.000042219"), (1e-10, 4, "1e-10"), (0.0, 4, "0"), (-0.00012345, 3, "-0.000123"),
])
def test_plain_numbers_are_positional_without_trailing_zeros(value, digits, text):
    """Budgets and bounds in dollars as written: 0.00004, not 4e-05 (nor fixed's column-aligned 0.0000400)."""
    assert plain(value, digits) == text


def test_a_share_neither_none_nor_all_is_never_written_as_either():
    """recommend --all wrote 1 of 200 repetitions as "0%" and 499 of 500 as "100%" (in its returned sets, exploited
    configurations and shares under requirements), as REPORT.html did."""
    from cabench.units import percent

    written = {v: percent(v) for v in (0.0, 1 / 200, 0.006, 0.5, 0.994, 499 / 500, 1.0)}
    assert written == {0.0: "0%", 1 / 200: "<1%", 0.006: "1%", 0.5: "50%", 0.994: "99%", 499 / 500: ">99%",
                       1.0: "100%"}
    assert percent(sum([0.1] * 10)) == "100%"  # ten shares of 10% summing to 0.9999999999999999 are all
