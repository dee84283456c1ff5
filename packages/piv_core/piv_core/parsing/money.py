"""Money text to exact cents, and back.

Tolerant of how people write money (``$``, thousands commas, surrounding spaces, a
leading sign), strict about value: a figure is only a number of cents when it is one
exactly; ``12.345`` is not a cent amount and parses to None rather than being rounded.

Figures come from model replies, so their shape is checked before any arithmetic: a
figure's size is decided from its digits and exponent alone, and the arithmetic that
follows works on at most 36 digits and a power of ten of at most 10**19.
"""

from __future__ import annotations

import re
from decimal import Decimal

_MAX_DIGITS = 18
"""A cent amount is below 10**18 in magnitude (in currency units, not cents)."""
_MAX_WRITTEN = 2 * _MAX_DIGITS
"""The most characters (text) or coefficient digits (Decimal) a figure may have."""
_MIN_EXPONENT = -(_MAX_WRITTEN + 1)
"""A non-zero coefficient of at most 36 digits ends in at most 35 zeros, so below this it leaves a
fraction of a cent."""
_MAX_EXPONENT = _MAX_DIGITS - 1
"""Above this every non-zero coefficient is at least 10**18."""
_INT_LIMIT = 10**_MAX_DIGITS
_MONEY_TEXT = re.compile(r"^(?P<lead>[+-]?)\$?(?P<inner>[+-]?)(?P<digits>\d+(?:\.\d*)?|\.\d+)$")


def parse_cents(value: object) -> int | None:
    """Exact cents of `value` (str, int or Decimal), or None when it is not a cent amount.

    Accepts ``1234.5``, ``"1,234.50"``, ``"$1234.50"``, ``"-$12.00"``, ``"$-12"``,
    ``Decimal("1.2300")``. Rejects booleans, floats (they are not exact), NaN/infinity,
    exponents in text, sub-cent precision and anything of absurd size. The size rule is
    exact and decided before any arithmetic:

    - the magnitude must be below 10**18 (ints: ``-10**18 < value < 10**18``);
    - text may have at most 36 characters once commas and spaces are dropped;
    - a Decimal (a JSON number is read as one) may have at most 36 coefficient digits,
      and its exponent must lie in [-37, 17]. No non-zero cent amount of at most 36
      digits lies outside that range, so the bound only matters for zero: ``0e5`` and
      ``0E-37`` are 0 cents, ``0E-38``, ``0e18`` and ``0e10000000`` are not cent amounts.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value * 100 if -_INT_LIMIT < value < _INT_LIMIT else None
    if isinstance(value, Decimal):
        return _decimal_cents(value)
    if isinstance(value, str):
        text = value.replace(",", "").replace(" ", "").strip()
        if len(text) > _MAX_WRITTEN:
            return None
        match = _MONEY_TEXT.match(text)
        if match is None:
            return None
        lead, inner, digits = match.groups()
        if lead and inner:
            return None
        return _decimal_cents(Decimal(lead + inner + digits))
    return None


def _decimal_cents(number: Decimal) -> int | None:
    """Cents of a Decimal by the rule `parse_cents` states, from its sign, digits and exponent alone."""
    if not number.is_finite():
        return None
    # The place of the leading digit (the exponent itself for zero), read without touching the
    # digits: it settles figures of absurd magnitude, and absurd exponents of zero, at once.
    if not _MIN_EXPONENT <= number.adjusted() < _MAX_DIGITS:
        return None
    negative, digits, exponent = number.as_tuple()
    if not isinstance(exponent, int) or len(digits) > _MAX_WRITTEN:
        return None
    if not _MIN_EXPONENT <= exponent <= _MAX_EXPONENT:
        return None
    shift = exponent + 2  # in [-35, 19]: exact integer arithmetic on at most 36 digits
    if shift < 0:
        if any(digits[shift:]):
            return None
        digits, shift = digits[:shift], 0
    cents = int("".join(map(str, digits)) or "0") * 10**shift
    return -cents if negative else cents


def format_cents(cents: int) -> str:
    """``123456`` -> ``"1234.56"``; ``-5`` -> ``"-0.05"``."""
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    return f"{sign}{whole}.{part:02d}"


def cents_of(amount: Decimal) -> int:
    """Cents of a Decimal that is already a whole number of cents."""
    cents = amount * 100
    if cents != cents.to_integral_value():
        raise ValueError(f"{amount} is not a whole number of cents")
    return int(cents)


__all__ = ["cents_of", "format_cents", "parse_cents"]
