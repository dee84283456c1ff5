"""Money text to exact cents, and back.

Tolerant of how people write money (``$``, thousands commas, surrounding spaces, a
leading sign), strict about value: a figure is only a number of cents when it is one
exactly; ``12.345`` is not a cent amount and parses to None rather than being rounded.
"""

from __future__ import annotations

import re
from decimal import Decimal

_MAX_DIGITS = 18
_LIMIT = Decimal(10) ** _MAX_DIGITS
_MONEY_TEXT = re.compile(r"^(?P<lead>[+-]?)\$?(?P<inner>[+-]?)(?P<digits>\d+(?:\.\d*)?|\.\d+)$")


def parse_cents(value: object) -> int | None:
    """Exact cents of `value` (str, int or Decimal), or None when it is not a cent amount.

    Accepts ``1234.5``, ``"1,234.50"``, ``"$1234.50"``, ``"-$12.00"``, ``"$-12"``.
    Rejects booleans, floats (they are not exact), NaN/infinity, exponents, sub-cent
    precision and absurdly long numbers.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = Decimal(value)
    elif isinstance(value, Decimal):
        number = value
    elif isinstance(value, str):
        text = value.replace(",", "").replace(" ", "").strip()
        if len(text) > 2 * _MAX_DIGITS:
            return None
        match = _MONEY_TEXT.match(text)
        if match is None:
            return None
        lead, inner, digits = match.groups()
        if lead and inner:
            return None
        number = Decimal(lead + inner + digits)
    else:
        return None
    if not number.is_finite() or abs(number) >= _LIMIT:
        return None
    negative, digits, exponent = number.as_tuple()
    shift = exponent + 2  # exact integer arithmetic: no context rounding, no underflow
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
