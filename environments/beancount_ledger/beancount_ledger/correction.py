"""One correcting transaction built from its parts: what the low rungs' ``book_correction`` and
``correct_bank_line`` append.

Every correction the policy asks for at rungs 1 to 12 moves one amount between two accounts on the
date of a bank statement line, tagged with that line's ``ref``; a line not booked, booked twice or
booked at a wrong amount (all that rungs 1 to 5 plant) is corrected by moving the operating bank
account and the one account opposite it. ``book_correction`` takes the ref, the amount and the two
accounts as plain arguments (`correcting_entry`), ``correct_bank_line`` the ref, the bank's amount
(as an amount, or as the arithmetic that gives it, worked out exactly in piv-core's bounded calculator
language) and the other account (`bank_entry`). Each tool dates the entry from the statement itself
(`statement.statement_dates`), so a model writes no Beancount syntax and escapes no multi-line text;
each part is checked on its own here (its shape and size, before anything is rendered), so the text
rendered is exactly one two-posting transaction and nothing else. The ledger it is appended to is then
checked as a whole like any other write (`tools`): this module only spares the typing.
"""

from __future__ import annotations

import re
from datetime import date as Date

from piv_core.parsing.arithmetic import Unworkable, evaluate
from piv_core.parsing.money import format_cents, parse_cents

from beancount_ledger.world.model import BANK

_LONGEST = 120
"""The most characters any part may have (an account name of the chart is far shorter)."""
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_REF = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_REF_EXAMPLE = "BS2403-007 (the statement line's ref)"
_ACCOUNT = re.compile(r"(?:Assets|Liabilities|Equity|Income|Expenses)(?::[A-Z0-9][A-Za-z0-9-]*)+")


def _part(name: str, value: object, shape: re.Pattern[str], example: str) -> str:
    if not isinstance(value, str) or len(value.strip()) > _LONGEST or not shape.fullmatch(value.strip()):
        raise ValueError(f"{name} must look like {example}")
    return value.strip()


def _dated(date: object) -> str:
    day = _part("date", date, _DATE, "2024-03-31")
    try:
        Date.fromisoformat(day)
    except ValueError:
        raise ValueError("date must be a real day, like 2024-03-31") from None
    return day


def _worked(expression: str) -> int | None:
    """The cents `expression` works out to in the calculator's bounded language
    (`arithmetic.evaluate`: numbers, ``+ - * /`` and brackets, nothing else), or None when it is not
    that language or not a whole number of cents."""
    try:
        return parse_cents(evaluate(expression))
    except Unworkable:
        return None


def _cents(name: str, amount: object, worked: bool = False) -> int:
    """The non-zero cents `amount` writes; with `worked`, also the arithmetic that gives them."""
    cents = parse_cents(amount) if isinstance(amount, str) else None
    if cents is None and worked and isinstance(amount, str) and len(amount) <= _LONGEST:
        cents = _worked(amount)
    if not cents:
        arithmetic = ', or the subtraction that gives it, like "1250.00 - 1205.00"' if worked else ""
        raise ValueError(
            f'{name} must be a non-zero amount in AUD to the cent, written as text, like "18.00"{arithmetic}'
        )
    return cents


def _render(day: str, ref: str, first: str, cents: int, second: str) -> str:
    width = max(len(first), len(second)) + 2
    return (
        f'{day} * "Correction for {ref}"\n'
        f'  bank_ref: "{ref}"\n'
        f"  {first:<{width}}{format_cents(cents)} AUD\n"
        f"  {second:<{width}}{format_cents(-cents)} AUD"
    )


def correcting_entry(date: object, bank_ref: object, account: object, amount: object, other: object) -> str:
    """The transaction that posts `amount` to `account` and its negative to `other`, dated `date`
    and tagged ``bank_ref: "<bank_ref>"``. Raises ValueError naming the first bad part."""
    day = _dated(date)
    ref = _part("bank_ref", bank_ref, _REF, _REF_EXAMPLE)
    first = _part("account", account, _ACCOUNT, "Assets:Bank:Operating")
    second = _part("other_account", other, _ACCOUNT, "Liabilities:AccountsPayable")
    if first == second:
        raise ValueError("account and other_account must differ")
    return _render(day, ref, first, _cents("amount", amount), second)


def bank_entry(date: object, bank_ref: object, bank_amount: object, account: object) -> str:
    """The transaction that moves the operating bank account (`BANK`) by `bank_amount` and posts
    its negative to `account`, dated `date` and tagged ``bank_ref: "<bank_ref>"``: the shape of
    every correction rungs 1 to 4 ask for. `bank_amount` may be written as the arithmetic that gives
    it (``"1250.00 - 1205.00"``), worked out exactly here, so that those rungs ask which figures make
    the correction and not the sum itself. Raises ValueError naming the first bad part."""
    day = _dated(date)
    ref = _part("bank_ref", bank_ref, _REF, _REF_EXAMPLE)
    other = _part("account", account, _ACCOUNT, "Liabilities:AccountsPayable")
    if other == BANK:
        raise ValueError(f"account must be the account opposite the bank, not {BANK} itself")
    return _render(day, ref, BANK, _cents("bank_amount", bank_amount, worked=True), other)
