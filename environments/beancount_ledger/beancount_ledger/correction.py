"""One correcting transaction built from its parts: what the low rungs' ``book_correction`` appends.

Every correction the policy asks for at rungs 1 to 5 moves one amount between two accounts on the
date of a bank statement line, tagged with that line's ``ref``. The tool takes the ref, the amount
and the two accounts as plain arguments and dates the entry from the statement itself
(`statement.statement_dates`), so a model writes no Beancount syntax and escapes no multi-line text; each part
is checked on its own here (its shape and size, before anything is rendered), so the text
rendered is exactly one two-posting transaction and nothing else. The ledger it is appended to is
then checked as a whole like any other write (`tools`): this module only spares the typing.
"""

from __future__ import annotations

import re
from datetime import date as Date

from piv_core.parsing.money import format_cents, parse_cents

_LONGEST = 120
"""The most characters any part may have (an account name of the chart is far shorter)."""
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_REF = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_ACCOUNT = re.compile(r"(?:Assets|Liabilities|Equity|Income|Expenses)(?::[A-Z0-9][A-Za-z0-9-]*)+")


def _part(name: str, value: object, shape: re.Pattern[str], example: str) -> str:
    if not isinstance(value, str) or len(value.strip()) > _LONGEST or not shape.fullmatch(value.strip()):
        raise ValueError(f"{name} must look like {example}")
    return value.strip()


def correcting_entry(date: object, bank_ref: object, account: object, amount: object, other: object) -> str:
    """The transaction that posts `amount` to `account` and its negative to `other`, dated `date`
    and tagged ``bank_ref: "<bank_ref>"``. Raises ValueError naming the first bad part."""
    day = _part("date", date, _DATE, "2024-03-31")
    try:
        Date.fromisoformat(day)
    except ValueError:
        raise ValueError("date must be a real day, like 2024-03-31") from None
    ref = _part("bank_ref", bank_ref, _REF, "BS2403-007 (the statement line's ref)")
    first = _part("account", account, _ACCOUNT, "Assets:Bank:Operating")
    second = _part("other_account", other, _ACCOUNT, "Liabilities:AccountsPayable")
    if first == second:
        raise ValueError("account and other_account must differ")
    cents = parse_cents(amount) if isinstance(amount, str) else None
    if not cents:
        raise ValueError('amount must be a non-zero amount in AUD to the cent, written as text, like "18.00"')
    width = max(len(first), len(second)) + 2
    return (
        f'{day} * "Correction for {ref}"\n'
        f'  bank_ref: "{ref}"\n'
        f"  {first:<{width}}{format_cents(cents)} AUD\n"
        f"  {second:<{width}}{format_cents(-cents)} AUD"
    )
