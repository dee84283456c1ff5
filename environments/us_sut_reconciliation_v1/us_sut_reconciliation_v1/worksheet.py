"""The worksheet a focused task that asks for every row's correct tax ends on: one line per row to
copy and complete, and the answer line (`worksheet`, laid out by `piv_core.ledger_audit.grading`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal

from piv_core.ledger_audit.grading import figure_of, verdict
from piv_core.ledger_audit.grading import worksheet as ledger_worksheet
from piv_core.runtime import calculator

from us_sut_reconciliation_v1.ledger import EXEMPT, SALE, Quarter, Row
from us_sut_reconciliation_v1.rules import (
    FIGURES,
    LOCAL_RATES,
    OUTSIDE_PERIOD,
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
"""Each figure as a worksheet's answer line says to work it out when no row is left out of the return
(with ``outside_period`` among the codes, over the rows dated inside the quarter: `_summed`)."""
COMPARED_CODES = (TAX_ON_EXEMPT_ITEM, TAX_MISCALCULATED)
"""The fault codes a sale's recorded tax against its correct tax decides alone (a purchase has none
of them)."""
WORKSHEET_CODES = (*COMPARED_CODES, OUTSIDE_PERIOD)
"""The only codes a task that asks for every row's correct tax may plant: those a worksheet line
decides, the two by the comparison and ``outside_period`` by the row's date against the quarter,
so that each line's questions are the whole of that row's audit."""
DATE = "the date"
"""What a line's question on the row's date is about, as its faults name it (`verdict`)."""


def _summed(name: str, dated: bool) -> str:
    """How the answer line says to work figure `name` out; `dated`: over the rows dated inside the quarter."""
    how = _SUMMED[name]
    return re.sub(r" (sales|purchases)$", r" \1 dated inside the quarter", how) if dated else how


def product(gross: Decimal, rate: str) -> str:
    """The step between `gross` x `rate` / 100 and its result, so that no step multiplies a figure of
    more than two decimals: the price's hundredth, exact, times the rate for a whole-dollar price
    (``5.00 x 9``), else the product left open before the division (``<product of 90.71 x 8> / 100``)."""
    whole, _, decimals = f"{gross.scaleb(-2):f}".partition(".")
    if len(decimals.rstrip("0")) <= 2:
        return f"{whole}.{decimals.rstrip('0').ljust(2, '0')} x {rate}"
    return f"<product of {gross} x {rate}> / 100"


def worksheet(
    rows: Sequence[Row],
    figures: Sequence[str],
    business_zip: str,
    calculator_offered: bool = False,
    quarter: Quarter | None = None,
) -> str:
    """The closing part of a user prompt that asks for every row's correct tax (`ROW_KEY`): one
    line per row to copy and complete (whether it is exempt, and for a taxable sale the rate of its
    delivery ZIP and the product's steps (`product`), then the comparison with the recorded tax and
    the fault it gives), and the answer line with this ledger's transaction_ids in place.

    `quarter`, when the task's codes include ``outside_period``: each line opens on whether the
    row's date is inside the quarter (a yes or no of its own, whose no is that code), and
    sales_tax_due is the sum over the sales dated inside it (no addition line, which would name
    them)."""
    lines = []
    asked = () if quarter is None else ((DATE, OUTSIDE_PERIOD),)
    span = "" if quarter is None else f"{quarter.start.isoformat()} to {quarter.end.isoformat()}"
    for row in rows:
        dated = f"Dated {row.date.isoformat()}: inside the quarter, {span}? <yes or no>. " if asked else ""
        if row.kind != SALE:
            tax = f"the use tax due (PURCHASES, at the business ZIP {business_zip}'s rate) = <result>"
            faults = f'<[] if yes, ["{OUTSIDE_PERIOD}"] if no>' if asked else "[]"
            lines.append(
                f"{row.txn_id}: {dated}a purchase of {row.category}. Correct tax = {tax}. Recorded tax "
                f"{row.tax} is what the vendor charged, never audited. Faults: {faults}"
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
        check = verdict(f"recorded tax {row.tax}", figure, code, figure_of(ROW_KEY, row.txn_id), asked)
        lines.append(f"{row.txn_id}: {dated}{row.category} is {status}. {work} {check}")
    labels = {name: _summed(name, bool(asked)) for name in FIGURES if name in figures}
    stated = {row.txn_id: "0.00" for row in rows if row.kind == SALE and is_exempt(row)}
    sales = [row.txn_id for row in rows if row.kind == SALE]
    whole = "sales_tax_due" in labels and len(sales) == len(rows) and not asked
    sums = {"sales_tax_due": sales} if whole else {}
    closing = calculator.USER_NOTE if calculator_offered else None
    txn_ids = [row.txn_id for row in rows]
    return ledger_worksheet(lines, labels, ROW_KEY, txn_ids, ROW_KEY, stated, sums, closing)
