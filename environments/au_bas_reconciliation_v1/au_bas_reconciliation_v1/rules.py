"""The authority: GST rules that re-derive the corrected BAS and the fault key from a finished ledger.

`reconcile()` reads only the quarter and the rows the model is shown. It never sees what the
generator meant to inject, so a generator bug shows up as a key that disagrees with the
generator's intent, never as a silently wrong key. The prompt states each rule here in words.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import NamedTuple

from piv_core.money import cents_of

from au_bas_reconciliation_v1.ledger import PURCHASE, SALE, TAXABLE, Quarter, Row

GST_ON_GST_FREE = "gst_on_gst_free"
GST_MISCALCULATED = "gst_miscalculated"
DUPLICATE_INVOICE = "duplicate_invoice"
OUTSIDE_PERIOD = "outside_period"
MISSING_ABN_OVER_THRESHOLD = "missing_abn_over_threshold"
FAULT_CODES = (
    GST_ON_GST_FREE,
    GST_MISCALCULATED,
    DUPLICATE_INVOICE,
    OUTSIDE_PERIOD,
    MISSING_ABN_OVER_THRESHOLD,
)

ABN_THRESHOLD = Decimal("82.50")
"""A purchase priced above this (GST-inclusive) needs the supplier's ABN for an input tax credit."""

_CENT = Decimal("0.01")
_ELEVEN = Decimal(11)
_TAXABLE = frozenset(TAXABLE)


class Reconciliation(NamedTuple):
    """The corrected BAS in cents and the fault key {txn_id: codes in FAULT_CODES order}."""

    g1: int
    gst_on_sales: int  # label 1A
    gst_on_purchases: int  # label 1B
    net: int
    faults: dict[str, tuple[str, ...]]

    @property
    def labels(self) -> dict[str, int]:
        return {"G1": self.g1, "1A": self.gst_on_sales, "1B": self.gst_on_purchases, "net": self.net}

    @property
    def fault_pairs(self) -> set[tuple[str, str]]:
        return {(txn, code) for txn, codes in self.faults.items() for code in codes}


def correct_gst(row: Row) -> Decimal:
    """GST inside a taxable row's GST-inclusive price: amount / 11, half-up to the cent; else 0."""
    if row.category not in _TAXABLE:
        return Decimal("0.00")
    return (row.amount / _ELEVEN).quantize(_CENT, rounding=ROUND_HALF_UP)


def row_faults(row: Row, quarter: Quarter, seen_invoices: set[str]) -> tuple[str, ...]:
    """Every fault code whose condition holds for `row` (`seen_invoices` = invoices listed above it)."""
    codes = ()
    if row.category in _TAXABLE:
        if row.gst != correct_gst(row):
            codes += (GST_MISCALCULATED,)
    elif row.gst:
        codes += (GST_ON_GST_FREE,)
    if row.invoice in seen_invoices:
        codes += (DUPLICATE_INVOICE,)
    if not quarter.start <= row.date <= quarter.end:
        codes += (OUTSIDE_PERIOD,)
    if row.kind == PURCHASE and row.amount > ABN_THRESHOLD and not row.abn.strip():
        codes += (MISSING_ABN_OVER_THRESHOLD,)
    return codes


def reconcile(quarter: Quarter, rows: list[Row]) -> Reconciliation:
    """Re-derive the corrected BAS and the fault key from the ledger as listed."""
    g1 = gst_on_sales = gst_on_purchases = Decimal(0)
    faults: dict[str, tuple[str, ...]] = {}
    seen: set[str] = set()
    for row in rows:
        codes = row_faults(row, quarter, seen)
        seen.add(row.invoice)
        if codes:
            faults[row.txn_id] = codes
            if DUPLICATE_INVOICE in codes or OUTSIDE_PERIOD in codes:
                continue
        if row.kind == SALE:
            g1 += row.amount
            gst_on_sales += correct_gst(row)
        elif not codes or MISSING_ABN_OVER_THRESHOLD not in codes:
            gst_on_purchases += correct_gst(row)
    return Reconciliation(
        cents_of(g1),
        cents_of(gst_on_sales),
        cents_of(gst_on_purchases),
        cents_of(gst_on_sales - gst_on_purchases),
        faults,
    )
