"""The worksheet a focused task that asks for every row's correct tax ends on: one line per row to
copy and complete, and the answer line (`worksheet`, laid out by `piv_core.ledger_audit.grading`)."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from piv_core.ledger_audit.grading import figure_of, verdict
from piv_core.ledger_audit.grading import worksheet as ledger_worksheet
from piv_core.runtime import calculator

from us_sut_reconciliation_v1.ledger import EXEMPT, SALE, Row
from us_sut_reconciliation_v1.rules import (
    FIGURES,
    LOCAL_RATES,
    STATE_RATE,
    TAX_MISCALCULATED,
    TAX_ON_EXEMPT_ITEM,
    is_exempt,
)

ROW_KEY = "tax"
"""The answer key of the per-row figures (`row_figures`): {transaction_id: the row's correct tax}."""

_SUMMED = {
    "gross_sales": "the sum of gross_amount over the sales",
    "exempt_sales": "the sum of gross_amount over the exempt sales",
    "taxable_sales": "gross_sales - exempt_sales",
    "sales_tax_due": "the sum of the correct tax of the sales",
    "use_tax_due": "the sum of the use tax due over the purchases",
    "net_remittance": "sales_tax_due + use_tax_due",
}
"""Each figure as a worksheet's answer line says to work it out (`worksheet`: no row is left out there)."""
COMPARED_CODES = (TAX_ON_EXEMPT_ITEM, TAX_MISCALCULATED)
"""The fault codes a sale's recorded tax against its correct tax decides alone: the only ones a
task that asks for every row's correct tax may plant, so that each worksheet line's `verdict` is
the whole of that row's audit (a purchase has none of them)."""


def product(gross: Decimal, rate: str) -> str:
    """The step between `gross` x `rate` / 100 and its result, so that no step multiplies a figure of
    more than two decimals: the price's hundredth, exact, times the rate for a whole-dollar price
    (``5.00 x 9``), else the product left open before the division (``<product of 90.71 x 8> / 100``)."""
    whole, _, decimals = f"{gross.scaleb(-2):f}".partition(".")
    if len(decimals.rstrip("0")) <= 2:
        return f"{whole}.{decimals.rstrip('0').ljust(2, '0')} x {rate}"
    return f"<product of {gross} x {rate}> / 100"


def worksheet(
    rows: Sequence[Row], figures: Sequence[str], business_zip: str, calculator_offered: bool = False
) -> str:
    """The closing part of a user prompt that asks for every row's correct tax (`ROW_KEY`): one
    line per row to copy and complete (whether it is exempt, and for a taxable sale the rate of its
    delivery ZIP and the product's steps (`product`), then the comparison with the recorded tax and
    the fault it gives), and the answer line with this ledger's transaction_ids in place."""
    lines = []
    for row in rows:
        if row.kind != SALE:
            tax = f"the use tax due (PURCHASES, at the business ZIP {business_zip}'s rate) = <result>"
            lines.append(
                f"{row.txn_id}: a purchase of {row.category}. Correct tax = {tax}. Recorded tax {row.tax} "
                "is what the vendor charged, never audited. Faults: []"
            )
            continue
        if is_exempt(row):
            why = (
                "an exempt category"
                if row.category in EXEMPT
                else "a taxable category with an honoured claim"
            )
            work, status, code, figure = "Correct tax = 0.00.", f"exempt ({why})", TAX_ON_EXEMPT_ITEM, "0.00"
        else:
            rate = f"{STATE_RATE + LOCAL_RATES[row.zip][1]:.3f}".rstrip("0").rstrip(".")  # 9, 8.25
            why = " (its exemption claim is not honoured)" if row.claimed else ""
            work = f"Correct tax = {row.gross} x {rate} / 100 = {product(row.gross, rate)} = <result>."
            status, code, figure = (
                f"taxable{why}, delivered to {row.zip} at {rate}%",
                TAX_MISCALCULATED,
                "<result>",
            )
        check = verdict(f"recorded tax {row.tax}", figure, code, figure_of(ROW_KEY, row.txn_id))
        lines.append(f"{row.txn_id}: {row.category} is {status}. {work} {check}")
    asked = {name: _SUMMED[name] for name in FIGURES if name in figures}
    stated = {row.txn_id: "0.00" for row in rows if row.kind == SALE and is_exempt(row)}
    sales = [row.txn_id for row in rows if row.kind == SALE]
    sums = {"sales_tax_due": sales} if "sales_tax_due" in asked and len(sales) == len(rows) else {}
    closing = calculator.USER_NOTE if calculator_offered else None
    txn_ids = [row.txn_id for row in rows]
    return ledger_worksheet(lines, asked, ROW_KEY, txn_ids, ROW_KEY, stated, sums, closing)
