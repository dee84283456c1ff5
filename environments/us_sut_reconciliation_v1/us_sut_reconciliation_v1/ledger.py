"""The ledger: its rows, the filing quarter, the category vocabulary and the CSV the model reads.

This is the vocabulary the generator, the rules and the prompt share. It knows nothing of
tax rates, faults or the return.
"""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal
from typing import NamedTuple

from piv_core.table import read_table

TAXABLE = (
    "general_merchandise",
    "electronics",
    "furniture",
    "clothing",
    "prepared_food",
    "office_supplies",
    "software",
    "industrial_equipment",
)
EXEMPT = ("unprepared_grocery", "prescription_drug", "medical_device", "consulting_service")
CATEGORIES = TAXABLE + EXEMPT

SALE, PURCHASE = "sale", "purchase"
YES, NO = "true", "false"
COLUMNS = (
    "transaction_id",
    "invoice_number",
    "date",
    "type",
    "category",
    "gross_amount",
    "tax_collected_or_paid",
    "jurisdiction_zip",
    "tax_exempt_claimed",
    "customer_or_vendor_cert_id",
)


class Row(NamedTuple):
    """One ledger line. `gross` is the pre-tax price; `tax` is the tax recorded in the books:
    collected from the customer on a sale, paid to the vendor on a purchase."""

    txn_id: str
    invoice: str
    date: date
    kind: str
    category: str
    gross: Decimal
    tax: Decimal
    zip: str
    claimed: bool
    cert: str


class Quarter(NamedTuple):
    """A calendar filing quarter, both ends inclusive."""

    year: int
    number: int

    @property
    def start(self) -> date:
        return date(self.year, 3 * self.number - 2, 1)

    @property
    def end(self) -> date:
        if self.number == 4:
            return date(self.year, 12, 31)
        return date(self.year, 3 * self.number + 1, 1) - timedelta(days=1)

    def contains(self, day: date) -> bool:
        return self.start <= day <= self.end

    def describe(self) -> str:
        return f"{self.year} Q{self.number} ({self.start.isoformat()} to {self.end.isoformat()})"


def to_csv(rows: list[Row]) -> str:
    """The ledger as the model sees it: a header line, then one line per row."""
    lines = [",".join(COLUMNS)]
    for r in rows:
        lines.append(
            f"{r.txn_id},{r.invoice},{r.date.isoformat()},{r.kind},{r.category},{r.gross},{r.tax},"
            f"{r.zip},{YES if r.claimed else NO},{r.cert}"
        )
    return "\n".join(lines)


def _flag(text: str) -> bool:
    if text not in (YES, NO):
        raise ValueError(f"tax_exempt_claimed must be {YES} or {NO}, got {text!r}")
    return text == YES


def from_csv(text: str) -> list[Row]:
    """Parse `to_csv` output back into rows (raises ValueError on a malformed ledger)."""
    rows = []
    for fields in read_table(text, COLUMNS):
        txn_id, invoice, day, kind, category, gross, tax, zip_code, claimed, cert = fields
        if kind not in (SALE, PURCHASE) or category not in CATEGORIES:
            raise ValueError(f"ledger line {txn_id}: unknown type {kind!r} or category {category!r}")
        rows.append(
            Row(
                txn_id,
                invoice,
                date.fromisoformat(day),
                kind,
                category,
                Decimal(gross),
                Decimal(tax),
                zip_code,
                _flag(claimed),
                cert,
            )
        )
    return rows
