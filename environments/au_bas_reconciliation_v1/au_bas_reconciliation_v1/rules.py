"""The authority: GST rules that re-derive the corrected BAS and the fault key from a finished ledger.

`reconcile()` reads only the quarter and the rows the model is shown. It never sees what the
generator meant to inject, so a generator bug shows up as a key that disagrees with the
generator's intent, never as a silently wrong key. The prompt states each rule here in words.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from decimal import ROUND_HALF_UP, Decimal

from piv_core.ledger_audit.grading import DUPLICATE_INVOICE, OUTSIDE_PERIOD, Key, audit_rows
from piv_core.parsing.money import cents_of

from au_bas_reconciliation_v1.ledger import PURCHASE, SALE, TAXABLE, Quarter, Row

GST_ON_GST_FREE = "gst_on_gst_free"
GST_MISCALCULATED = "gst_miscalculated"
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
_ALL_CODES = frozenset(FAULT_CODES)


LABELS = ("G1", "1A", "1B", "net")
"""The BAS labels reported: total sales, GST on sales, GST on purchases, and 1A - 1B."""


def correct_gst(row: Row) -> Decimal:
    """GST inside a taxable row's GST-inclusive price: amount / 11, half-up to the cent; else 0."""
    if row.category not in _TAXABLE:
        return Decimal("0.00")
    return (row.amount / _ELEVEN).quantize(_CENT, rounding=ROUND_HALF_UP)


def row_gst(rows: Iterable[Row]) -> dict[str, int]:
    """Every row's correct GST in cents, by txn_id (the per-row figures a task may ask for)."""
    return {row.txn_id: cents_of(correct_gst(row)) for row in rows}


def row_claims(rows: Iterable[Row]) -> dict[str, tuple[int, str]]:
    """What a changed figure reports of each row, for a task that reads the faults from the per-row
    figures (`piv_core.ledger_audit.grading.Claims`): the recorded GST in cents, and the code of
    its treatment (``gst_miscalculated`` taxable, ``gst_on_gst_free`` otherwise)."""
    return {
        row.txn_id: (cents_of(row.gst), GST_MISCALCULATED if row.category in _TAXABLE else GST_ON_GST_FREE)
        for row in rows
    }


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


def reconcile(quarter: Quarter, rows: list[Row], codes: Iterable[str] = FAULT_CODES) -> Key:
    """Re-derive the corrected BAS (cents by label) and the fault key from the ledger as listed.

    `codes` are the fault codes whose rules apply: all five, unless the task's prompt states
    fewer (a focused prompt); a code left out is never reported, and a row it would have left
    out of the BAS or denied a credit counts as any other row."""
    applied = frozenset(codes)

    def faults_of(row: Row, seen: set[str]) -> tuple[str, ...]:
        found = row_faults(row, quarter, seen)
        return found if applied >= _ALL_CODES else tuple(code for code in found if code in applied)

    faults, kept = audit_rows(rows, faults_of)
    return Key(totals(kept), faults)


def totals(
    kept: Iterable[tuple[Row, tuple[str, ...]]], gst_of: Callable[[Row], Decimal] = correct_gst
) -> dict[str, int]:
    """The BAS labels in cents over the rows that stay in it, each with its fault codes.

    `gst_of` is the GST each row contributes (the correct GST; a policy may trust the books)."""
    g1 = gst_on_sales = gst_on_purchases = Decimal(0)
    for row, codes in kept:
        if row.kind == SALE:
            g1 += row.amount
            gst_on_sales += gst_of(row)
        elif MISSING_ABN_OVER_THRESHOLD not in codes:
            gst_on_purchases += gst_of(row)
    amounts = (g1, gst_on_sales, gst_on_purchases, gst_on_sales - gst_on_purchases)
    return {label: cents_of(amount) for label, amount in zip(LABELS, amounts, strict=True)}
