"""The low rungs' side-by-side view: each bank statement line beside the ledger entries carrying its ref.

It is what a reconciliation screen shows a bookkeeper, read from two of the files as given (the
statement's rows, and beancount's own parse of the ledger's ``bank_ref`` metadata): no fact in it
is absent from the files or the policy. Its options add what a rung gives away, one at a time: a line
booked once at another amount than the statement's marked as such (rungs 1 to 3, so that their line to
correct is the one the view marks, whatever its kind), the account each line settles by its
description, as the policy names it (rungs 1 and 2), and the line to correct named at the end (rung 1).
Rungs 1 to 6's user message is this view (plain from rung 4, where the model compares a line's amount
with its booking's); rungs 7 to 9 show it plain under the quoted files, so that the comparison is one
line at a time; from rung 10 up the model compares the files itself.
"""

from __future__ import annotations

from decimal import Decimal

from beancount_ledger.bookkeeper import booked_by_ref, counter_account
from beancount_ledger.statement import bank_lines
from beancount_ledger.world import BANK


def _bank_amount(entry) -> Decimal:
    return sum((p.units.number for p in entry.postings if p.account == BANK), Decimal(0))


def _entry(entry) -> str:
    postings = ", ".join(f"{p.account} {p.units.number:.2f}" for p in entry.postings)
    return f'{entry.date} "{entry.narration}": {postings}'


def side_by_side(
    ledger: str, statement: str, settles: bool = False, names: bool = False, amounts: bool = False
) -> str:
    """One line per statement line with a ref: its ref, date, description and amount (with `settles`,
    the account its description settles by the policy), then what the ledger books under that ref
    (every entry, or that none does). With `amounts`, a line booked once whose entry moves the
    operating bank account by another amount than the line's says so. With `names`, the lines the
    view marks (not booked once, or with `amounts` booked at another amount) are repeated at the end,
    under a heading naming them as the lines to correct."""
    booked = booked_by_ref(ledger)
    rows, odd = [], []
    for line in bank_lines(statement):
        entries = booked.get(line["ref"], [])
        times = {0: "not booked", 1: "booked once", 2: "booked twice"}.get(
            len(entries), f"booked {len(entries)} times"
        )
        if amounts and len(entries) == 1 and _bank_amount(entries[0]) != Decimal(line["amount"]):
            times = "booked once, at another amount"
        found = " | ".join(_entry(e) for e in entries) if entries else "no entry carries this ref"
        settled = f" (settles {counter_account(line['description'])})" if settles else ""
        head = f"- {line['ref']} {line['date']} {line['description']} {line['amount']}{settled}"
        rows.append(f"{head}: {times}: {found}")
        if times != "booked once":
            odd.append(rows[-1])
    if names and odd:
        heading = "the one not booked once at its amount" if amounts else "the one not booked once"
        rows += ["", f"The line to correct, {heading}:", *odd]
    return "\n".join(rows)
