"""The ledger: its rows, the filing quarter, the category vocabulary and the CSV the model reads.

This is the vocabulary the generator, the rules and the prompt share. It knows nothing of
tax rates, faults or the return.
"""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal
from typing import NamedTuple

from piv_core.ledger_audit.plan import PURCHASE, SALE
from piv_core.parsing.table import Table, amount, choice, day, flag, text

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

YES, NO = "true", "false"


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


TABLE = Table(
    Row,
    [
        text("transaction_id"),
        text("invoice_number"),
        day("date"),
        choice("type", (SALE, PURCHASE)),
        choice("category", CATEGORIES),
        amount("gross_amount"),
        amount("tax_collected_or_paid"),
        text("jurisdiction_zip"),
        flag("tax_exempt_claimed", YES, NO),
        text("customer_or_vendor_cert_id"),
    ],
)
COLUMNS = TABLE.names
to_csv = TABLE.write
"""The ledger as the model sees it: a header line, then one line per row."""
from_csv = TABLE.read
"""`to_csv` output back into rows (raises ValueError on a malformed ledger)."""
