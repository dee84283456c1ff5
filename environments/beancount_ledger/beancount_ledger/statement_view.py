"""The low rungs' side-by-side view: each bank statement line beside the ledger entries carrying its ref.

It is what a reconciliation screen shows a bookkeeper, read from two of the files as given (the
statement's rows, and beancount's own parse of the ledger's ``bank_ref`` metadata): no fact in it
is absent from the files, and nothing in it says which line is wrong or what corrects it. Rung 1's
user message is this view; rung 2's shows it under the quoted files, so that the comparison is one
line at a time.
"""

from __future__ import annotations

from beancount_ledger.bookkeeper import bank_lines, booked_by_ref


def _entry(entry) -> str:
    postings = ", ".join(f"{p.account} {p.units.number:.2f}" for p in entry.postings)
    return f'{entry.date} "{entry.narration}": {postings}'


def side_by_side(ledger: str, statement: str) -> str:
    """One line per statement line with a ref: its ref, date, description and amount, then what the
    ledger books under that ref (every entry, or that none does)."""
    booked = booked_by_ref(ledger)
    rows = []
    for line in bank_lines(statement):
        entries = booked.get(line["ref"], [])
        times = {0: "not booked", 1: "booked once", 2: "booked twice"}.get(
            len(entries), f"booked {len(entries)} times"
        )
        found = " | ".join(_entry(e) for e in entries) if entries else "no entry carries this ref"
        rows.append(
            f"- {line['ref']} {line['date']} {line['description']} {line['amount']}: {times}: {found}"
        )
    return "\n".join(rows)
