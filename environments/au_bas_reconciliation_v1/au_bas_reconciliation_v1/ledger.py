"""The ledger: rows, the BAS quarter, the category vocabulary and the CSV form the model reads.

This module is the shared vocabulary of the generator, the rules and the prompt; it knows
nothing about faults or the answer key.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal, InvalidOperation
from typing import NamedTuple

from piv_core.table import read_table

TAXABLE = (
    "general_goods",
    "professional_services",
    "equipment",
    "office_supplies",
    "hospitality",
    "freight",
)
GST_FREE = ("basic_food", "medical", "education", "export")
INPUT_TAXED = ("financial_supply", "residential_rent")
CATEGORIES = TAXABLE + GST_FREE + INPUT_TAXED

SALE, PURCHASE = "sale", "purchase"
COLUMNS = ("txn_id", "date", "type", "counterparty", "invoice", "category", "amount", "gst", "abn")


class Row(NamedTuple):
    """One ledger line. `amount` is the GST-inclusive price; `gst` is the GST recorded in the books."""

    txn_id: str
    date: date
    kind: str
    counterparty: str
    invoice: str
    category: str
    amount: Decimal
    gst: Decimal
    abn: str


class Quarter(NamedTuple):
    """A BAS quarter, both ends inclusive."""

    start: date
    end: date

    def contains(self, day: date) -> bool:
        return self.start <= day <= self.end

    def describe(self) -> str:
        start, end = self.start, self.end
        return (
            f"{start.day} {start:%B %Y} to {end.day} {end:%B %Y} ({start.isoformat()} to {end.isoformat()})"
        )


def to_csv(rows: list[Row]) -> str:
    """The ledger as the model sees it: a header line, then one line per row."""
    lines = [",".join(COLUMNS)]
    for r in rows:
        lines.append(
            f"{r.txn_id},{r.date.isoformat()},{r.kind},{r.counterparty},{r.invoice},"
            f"{r.category},{r.amount},{r.gst},{r.abn}"
        )
    return "\n".join(lines)


def from_csv(text: str) -> list[Row]:
    """Parse `to_csv` output back into rows (raises ValueError on a malformed ledger)."""
    rows = []
    for fields in read_table(text, COLUMNS):
        txn_id, day, kind, counterparty, invoice, category, amount, gst, abn = fields
        try:
            rows.append(
                Row(
                    txn_id,
                    date.fromisoformat(day),
                    kind,
                    counterparty,
                    invoice,
                    category,
                    Decimal(amount),
                    Decimal(gst),
                    abn,
                )
            )
        except InvalidOperation:
            raise ValueError(f"ledger line has a malformed amount: {fields}") from None
    return rows
