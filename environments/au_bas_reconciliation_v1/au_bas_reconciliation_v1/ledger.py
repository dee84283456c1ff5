"""The ledger: rows, the BAS quarter, the category vocabulary and the CSV form the model reads.

This module is the shared vocabulary of the generator, the rules and the prompt; it knows
nothing about faults or the answer key.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import NamedTuple

from piv_core.ledger_audit.plan import PURCHASE, SALE
from piv_core.parsing.table import Table, amount, choice, day, text

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


TABLE = Table(
    Row,
    [
        text("txn_id"),
        day("date"),
        choice("type", (SALE, PURCHASE)),
        text("counterparty"),
        text("invoice"),
        choice("category", CATEGORIES),
        amount("amount"),
        amount("gst"),
        text("abn"),
    ],
)
COLUMNS = TABLE.names
to_csv = TABLE.write
"""The ledger as the model sees it: a header line, then one line per row."""
from_csv = TABLE.read
"""`to_csv` output back into rows (raises ValueError on a malformed ledger)."""
