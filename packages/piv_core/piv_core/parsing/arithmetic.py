"""Exact decimal arithmetic on an expression a model writes, within bounds set before any work.

The language is the four operations on decimal numbers: digits with at most one decimal point
(``12``, ``554.63``, ``.5``), ``+ - * /``, a sign before a number or a bracket, ``(`` and ``)``,
spaces. Nothing else is read: no names, calls, exponents, powers or other digits than ASCII, so
an expression can name no code and reach nothing. What it costs is bounded before it is worked
out: at most `MAX_CHARS` characters, numbers of at most `MAX_DIGITS` digits, brackets at most
`MAX_DEPTH` deep. The arithmetic is `decimal`'s, in a context of its own with `PRECISION`
significant digits and exponents within ``±EXPONENT_LIMIT``: a result out of that range is
refused, never approximated by an infinity.

`evaluate` gives the value; `calculation` the one line a calculator tool answers: the value to
the cent, half a cent up, and where that rounds it, the unrounded value to `SHOWN_DECIMALS`
decimals; or why there is none.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Context, Decimal, DecimalException, localcontext

MAX_CHARS = 200
"""The longest expression read."""
MAX_DIGITS = 24
"""The most digits one number may have."""
MAX_DEPTH = 16
"""How deep brackets may nest."""
PRECISION = 40
"""Significant digits every step is worked to."""
EXPONENT_LIMIT = 99
"""A result whose adjusted exponent is beyond ±this is refused (out of range)."""

_CENT = Decimal("0.01")
_SPACE = " \t\n\r\f\v"
"""The spaces the language allows between tokens (ASCII's, as ``\\s`` reads under ``re.ASCII``)."""
_TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d*)?|\.\d+)|([-+*/()]))", re.ASCII)
_CONTEXT = Context(prec=PRECISION, Emax=EXPONENT_LIMIT, Emin=-EXPONENT_LIMIT, rounding=ROUND_HALF_UP)


class Unworkable(ValueError):
    """An expression the calculator does not work out; the message says why in words for the model."""


def _tokens(expression: str) -> list[str]:
    if not isinstance(expression, str):
        raise Unworkable('the expression must be text, like "554.63 / 11"')
    if len(expression) > MAX_CHARS:
        raise Unworkable(f"the expression is longer than {MAX_CHARS} characters")
    text = expression.rstrip(_SPACE)
    tokens: list[str] = []
    depth = at = 0
    while at < len(text):
        match = _TOKEN.match(text, at)
        if match is None:
            shown = text[at:].lstrip(_SPACE)[:1]
            raise Unworkable(f"{shown!r} is not part of the calculator's language (digits . + - * / ( ))")
        number, symbol = match.groups()
        if number is not None and sum(ch.isdigit() for ch in number) > MAX_DIGITS:
            raise Unworkable(f"a number has more than {MAX_DIGITS} digits")
        depth += symbol == "("
        depth -= symbol == ")"
        if depth > MAX_DEPTH:
            raise Unworkable(f"brackets nest more than {MAX_DEPTH} deep")
        tokens.append(number if number is not None else symbol)
        at = match.end()
    if not tokens:
        raise Unworkable("the expression is empty")
    return tokens


class _Reader:
    """Recursive descent over the tokens; only brackets recurse, and `_tokens` bounded their depth."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.at = 0

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> str | None:
        token = self.peek()
        self.at += 1
        return token

    def sum(self) -> Decimal:
        value = self.product()
        while self.peek() in ("+", "-"):
            value = value + self.product() if self.take() == "+" else value - self.product()
        return value

    def product(self) -> Decimal:
        value = self.signed()
        while self.peek() in ("*", "/"):
            if self.take() == "*":
                value = value * self.signed()
            else:
                divisor = self.signed()
                if divisor == 0:
                    raise Unworkable("division by zero")
                value = value / divisor
        return value

    def signed(self) -> Decimal:
        negative = False
        while self.peek() in ("+", "-"):
            negative ^= self.take() == "-"
        value = self.atom()
        return -value if negative else value

    def atom(self) -> Decimal:
        token = self.take()
        if token == "(":
            value = self.sum()
            if self.take() != ")":
                raise Unworkable("a bracket is not closed")
            return value
        if token is None or token in ("+", "-", "*", "/", ")"):
            raise Unworkable(
                "a number or a bracket is missing" + ("" if token is None else f" before {token!r}")
            )
        return Decimal(token)


def evaluate(expression: str) -> Decimal:
    """The value of `expression` (see the module docstring), or `Unworkable` saying why not."""
    reader = _Reader(_tokens(expression))
    try:
        with localcontext(_CONTEXT):
            value = +reader.sum()
    except DecimalException:
        raise Unworkable(f"the result is out of range (beyond 1E{EXPONENT_LIMIT})") from None
    if reader.peek() is not None:
        raise Unworkable(f"{reader.peek()!r} is not expected there")
    return value


SHOWN_DECIMALS = 12
"""The most decimals of an unrounded value a reply shows (the value is worked to `PRECISION` digits)."""


def written(value: Decimal) -> str:
    """`value` in plain digits, no exponent, no trailing zeros after the point; cut to
    `SHOWN_DECIMALS` decimals with a trailing "…" where it has more."""
    text = format(value, "f")
    whole, _, decimals = text.partition(".")
    decimals = decimals.rstrip("0")
    if len(decimals) > SHOWN_DECIMALS:
        return f"{whole}.{decimals[:SHOWN_DECIMALS]}…"
    return f"{whole}.{decimals}" if decimals else whole


def calculation(expression: str) -> str:
    """What the calculator answers, on one line: ``<expression> = <value>`` when the value is a
    whole number of cents; else the value to the cent, half a cent up, then the unrounded value
    (`written`); or ``error: <why>``."""
    try:
        value = evaluate(expression)
    except Unworkable as why:
        return f"error: {why}"
    with localcontext(_CONTEXT) as wide:
        wide.prec = 2 * EXPONENT_LIMIT + 4  # room for every digit down to the cent
        cents = value.quantize(_CENT, rounding=ROUND_HALF_UP)
    shown = " ".join(expression.split())
    if cents == value:
        return f"{shown} = {cents}"
    return f"{shown} = {cents} to the cent, half a cent up (unrounded {written(value)})"
