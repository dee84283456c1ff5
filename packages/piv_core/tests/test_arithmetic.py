"""The calculator's language (`piv_core.parsing.arithmetic`): exact where it answers, and anything
else a model may send, hostile or malformed, gets an error line, never an exception or a value
read from outside the expression."""

from __future__ import annotations

import random
from decimal import ROUND_HALF_UP, Decimal, localcontext
from fractions import Fraction

import pytest
from piv_core.parsing.arithmetic import (
    EXPONENT_LIMIT,
    MAX_CHARS,
    MAX_DEPTH,
    MAX_DIGITS,
    PRECISION,
    Unworkable,
    calculation,
    evaluate,
)


def _number(rng: random.Random) -> str:
    whole = str(rng.randrange(10 ** rng.randint(1, 6)))
    return whole if rng.random() < 0.3 else f"{whole}.{rng.randrange(100):02d}"


def _expression(rng: random.Random, depth: int = 0) -> tuple[str, Fraction]:
    """A random expression and its exact value (no division by zero: such draws are redrawn)."""
    if depth > 3 or rng.random() < 0.35:
        text = _number(rng)
        value = Fraction(Decimal(text))
        if rng.random() < 0.2:
            return f"-{text}", -value
        return text, value
    left, a = _expression(rng, depth + 1)
    right, b = _expression(rng, depth + 1)
    op = rng.choice("+-*/")
    if op == "/" and b == 0:
        op = "*"
    value = {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else 0}[op]
    return f"({left} {op} {right})", value


@pytest.mark.parametrize("seed", range(8))
def test_generated_expressions_are_worked_out_exactly_to_the_stated_precision(seed):
    rng = random.Random(seed)
    checked = 0
    while checked < 150:
        text, exact = _expression(rng)
        if len(text) > MAX_CHARS:
            continue
        value = evaluate(text)
        checked += 1
        if exact == 0:
            assert value == 0
            continue
        # every step is rounded to PRECISION digits, so the value is exact up to a few units there
        error = abs(Fraction(value) - exact) / abs(exact)
        assert error < Fraction(10) ** (-(PRECISION - 4)), (text, value)


def test_the_tax_divisions_and_products_come_back_with_their_cents_first():
    assert calculation("554.63 / 11") == (
        "554.63 / 11 = 50.42 to the cent, half a cent up (unrounded 50.420909090909…)"
    )
    assert calculation("1234.5 * 6.25 / 100") == (
        "1234.5 * 6.25 / 100 = 77.16 to the cent, half a cent up (unrounded 77.15625)"
    )
    assert calculation("2335.63/11") == "2335.63/11 = 212.33"  # whole cents: nothing to round
    for amount in ("38.50", "0.55", "1.65", "10000.05", "554.63"):
        with localcontext() as ctx:
            ctx.prec = 50
            cents = (Decimal(amount) / 11).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
        assert calculation(f"{amount}/11").startswith(f"{amount}/11 = {cents}")


HOSTILE = [
    "__import__('os').system('id')",
    "open('/etc/passwd').read()",
    "os.environ",
    "2 ** 10",
    "2 ^ 10",
    "1e5",
    "1E999",
    "NaN",
    "Infinity",
    "inf * 0",
    "0x10",
    "1_000",
    "١٢٣ + 1",  # Arabic-Indic digits
    "１２",  # fullwidth digits
    "1\x00+1",
    "{1+1}",
    "[1]",
    "1 % 3",
    "1 // 3",
    "1,5 + 1",
    "$5 + 1",
    "(" * (MAX_DEPTH + 1) + "1" + ")" * (MAX_DEPTH + 1),
    "9" * (MAX_DIGITS + 1),
    "1" + "+1" * MAX_CHARS,
    "1/0",
    "1/(2-2)",
    "(1+2",
    "1+2)",
    "()",
    "1 2",
    "1..2",
    "",
    " \n\t ",
    "*",
    "-",
]


@pytest.mark.parametrize("expression", HOSTILE)
def test_what_is_not_the_language_is_an_error_line(expression):
    reply = calculation(expression)
    assert reply.startswith("error: ") and "\n" not in reply, reply
    with pytest.raises(Unworkable):
        evaluate(expression)


@pytest.mark.parametrize("value", [None, 12, 1.5, ["1+1"], {"expression": "1+1"}, b"1+1", True])
def test_an_argument_that_is_not_text_is_an_error_line(value):
    assert calculation(value).startswith("error: the expression must be text")


def test_a_result_out_of_range_is_refused_not_approximated():
    big = "*".join(["9" * MAX_DIGITS] * 5)  # about 1E120, within MAX_CHARS
    assert len(big) <= MAX_CHARS
    assert calculation(big) == f"error: the result is out of range (beyond 1E{EXPONENT_LIMIT})"
    assert calculation("/".join(["1"] + ["9" * MAX_DIGITS] * 5)).startswith("1/")  # tiny: shown as 0-ish


def test_the_limits_themselves_are_accepted():
    assert evaluate("(" * MAX_DEPTH + "1" + ")" * MAX_DEPTH) == 1
    assert evaluate("9" * MAX_DIGITS) == Decimal("9" * MAX_DIGITS)
    assert evaluate("-" * (MAX_CHARS - 1) + "1") == -1  # a run of signs is read without recursion
    assert evaluate(("1+" * MAX_CHARS)[: MAX_CHARS - 1] + "1") > 0


def test_random_text_over_the_alphabet_never_raises_anything_but_an_error_line():
    rng = random.Random(11)
    alphabet = "0123456789.+-*/() e_xé\n"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        reply = calculation(text)
        assert "\n" not in reply and (reply.startswith("error: ") or " = " in reply), (text, reply)
