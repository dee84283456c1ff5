"""Money parsing under hostile figures: the size rule is exact, decided before any arithmetic, and
changes nothing for a figure of ordinary size."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from piv_core import parse_cents

_LIMIT = Decimal(10) ** 18


def previous_parse_cents(value: object) -> int | None:
    """The Decimal and int paths as they were before the size rule, for figures of ordinary size."""
    number = Decimal(value) if isinstance(value, int) else value
    if not number.is_finite() or abs(number) >= _LIMIT:
        return None
    negative, digits, exponent = number.as_tuple()
    shift = exponent + 2
    if shift < 0:
        if any(digits[shift:]):
            return None
        digits, shift = digits[:shift], 0
    cents = int("".join(map(str, digits)) or "0") * 10**shift
    return -cents if negative else cents


def rule(number: Decimal) -> int | None:
    """The documented rule, by exact rational arithmetic (only used on exponents of modest size)."""
    _, digits, exponent = number.as_tuple()
    if len(digits) > 36 or not -37 <= exponent <= 17:
        return None
    cents = Fraction(number) * 100
    if abs(cents) >= 10**20 or cents.denominator != 1:
        return None
    return int(cents)


decimals = st.builds(
    lambda sign, digits, exponent: Decimal((sign, tuple(digits), exponent)),
    st.integers(0, 1),
    st.lists(st.integers(0, 9), min_size=1, max_size=40),
    st.integers(-60, 60),
)


@settings(max_examples=3000)
@given(decimals)
def test_decimals_follow_the_documented_rule(number):
    assert parse_cents(number) == rule(number)


@settings(max_examples=3000)
@given(decimals)
def test_a_figure_of_ordinary_size_parses_as_before(number):
    _, digits, exponent = number.as_tuple()
    if len(digits) <= 36 and (-37 <= exponent <= 17 or digits != (0,)):
        assert parse_cents(number) == previous_parse_cents(number)
    else:
        assert parse_cents(number) is None


@given(st.integers(-(10**18) + 1, 10**18 - 1))
def test_ints_parse_as_before(value):
    assert parse_cents(value) == previous_parse_cents(value) == value * 100


class Untouchable(Decimal):
    """A Decimal whose arithmetic and comparisons fail: parsing may only look at its digits."""

    def _refuse(self, *args):
        raise AssertionError("parse_cents did arithmetic on a figure")

    __abs__ = __neg__ = __pos__ = __add__ = __radd__ = __sub__ = __mul__ = __rmul__ = _refuse
    __truediv__ = __floordiv__ = __mod__ = __pow__ = __lt__ = __le__ = __gt__ = __ge__ = _refuse
    __eq__ = __ne__ = __int__ = __float__ = _refuse
    __hash__ = Decimal.__hash__
    quantize = scaleb = normalize = to_integral_value = _refuse


@pytest.mark.parametrize(
    ("text", "cents"),
    [
        ("12.34", 1234),
        ("-0.5", -50),
        ("1.2300", 123),
        ("0e5", 0),
        ("0E-37", 0),
        ("5E+3", 500_000),
        ("999999999999999999.99", 99_999_999_999_999_999_999),
        ("0e18", None),
        ("0E-38", None),
        ("0e10000000", None),
        ("0e999999999999999999", None),
        ("1e-999999999999999999", None),
        ("-0e-999999999999999999", None),
        ("1e1000000", None),
        ("1e18", None),
        ("1." + "0" * 35, 100),
        ("1." + "0" * 36, None),
        ("9" * 1_000_000, None),
        ("9" * 1_000_000 + "e-1000000", None),
        ("12.345", None),
    ],
    ids=lambda value: value if isinstance(value, str) and len(value) < 40 else None,
)
def test_a_decimal_is_decided_from_its_digits_and_exponent_alone(text, cents):
    """No arithmetic, no comparison: even an exponent of 10**18 costs nothing."""
    assert parse_cents(Untouchable(text)) == cents


ABSURD = {
    "10**18": 10**18,
    "-10**18": -(10**18),
    "10**100_000": 10**100_000,
    "-10**100_000": -(10**100_000),
    "37 nines": "9" * 37,
    "a million nines": "9" * 1_000_000,
    "$ and 40 ones": "$" + "1" * 40,
    "0. and 40 zeros": "0." + "0" * 40,
    "Decimal 1e1000000": Decimal("1e1000000"),
    "Decimal -1e999999999999999999": Decimal("-1e999999999999999999"),
    "Decimal of a million and one nines": Decimal("9" * 1_000_001),
}


@pytest.mark.parametrize("value", ABSURD.values(), ids=ABSURD)
def test_absurd_figures_are_not_cent_amounts(value):
    assert parse_cents(value) is None


def test_largest_figures_still_parse():
    assert parse_cents(10**18 - 1) == (10**18 - 1) * 100
    assert parse_cents("-$999,999,999,999,999,999.99") == -99_999_999_999_999_999_999
    assert parse_cents(Decimal("-999999999999999999.990000000000000000")) == -99_999_999_999_999_999_999
