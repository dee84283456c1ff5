"""The task text: every rule `rules.reconcile` applies, stated so the prompt alone fixes the key.

`read_ledger` and `read_labels` invert `user_prompt`: they recover the quarter, the rows and the
labels asked for from the text the model is shown, which is what the oracle policy and
`validate()` work from.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date

from au_bas_reconciliation_v1.ledger import GST_FREE, INPUT_TAXED, TAXABLE, Quarter, Row, from_csv, to_csv
from au_bas_reconciliation_v1.rules import ABN_THRESHOLD, LABELS

SYSTEM_PROMPT = f"""You are a bookkeeper preparing an Australian Business Activity Statement (BAS) for one quarter. \
You are given the quarter's GST ledger. Audit it for faults, then report the corrected BAS figures.

LEDGER COLUMNS
- txn_id: the row's identifier. Rows are listed in ledger order; "earlier" means higher up the list.
- date: YYYY-MM-DD.
- type: sale or purchase.
- counterparty, invoice: who the supply was with and the invoice number.
- category: the kind of supply (see below).
- amount: the GST-inclusive price in AUD. It is never wrong and never corrected.
- gst: the GST recorded in the books for the row (it may be wrong).
- abn: the supplier's ABN on a purchase; blank when the supplier gave none. Sales have no ABN.

CATEGORIES
- Taxable: {", ".join(TAXABLE)}.
- GST-free: {", ".join(GST_FREE)}.
- Input-taxed: {", ".join(INPUT_TAXED)}.

CORRECT GST OF A ROW
- Taxable category: amount / 11, rounded to the cent on that row alone, half a cent rounding up (ROUND_HALF_UP).
- GST-free or input-taxed category: 0.00.

FAULT CODES
Check every row, including rows that are left out of the BAS, and report every code whose condition holds \
(a row can have several):
- gst_on_gst_free: the category is GST-free or input-taxed and the recorded gst is not 0.00.
- gst_miscalculated: the category is taxable and the recorded gst differs from the correct GST.
- duplicate_invoice: the row's invoice number already appears on an earlier row. The first occurrence is \
not a fault; every later occurrence is.
- outside_period: the date is outside the BAS quarter. The quarter's first and last days are inside it.
- missing_abn_over_threshold: a purchase whose amount is over ${ABN_THRESHOLD} (strictly greater) with a blank \
abn, whatever its category. The input tax credit is denied.

CORRECTED BAS (dollars and cents, exact to the cent)
- Leave out entirely every row flagged duplicate_invoice or outside_period.
- G1 (total sales) = sum of amount over the remaining sales, every category included.
- 1A (GST on sales) = sum of the correct GST over the remaining sales.
- 1B (GST on purchases) = sum of the correct GST over the remaining purchases, except that a purchase flagged \
missing_abn_over_threshold contributes 0.00.
- net = 1A - 1B (negative when a refund is due).
The recorded gst column never enters the figures; only the correct GST does.

ANSWER FORMAT
Finish with one <answer> block holding a JSON object with exactly these keys: the four labels G1, 1A, 1B \
and net, and faults. When the task names the labels to report, give only those labels (and faults): only \
they are graded.
<answer>
{{"G1": "12345.67", "1A": "1122.33", "1B": "456.78", "net": "665.55", "faults": {{"T003": ["gst_miscalculated"], \
"T011": ["outside_period", "gst_on_gst_free"]}}}}
</answer>
- Figures may be JSON numbers or strings; "$" and thousands commas are ignored; they must be exact to the cent.
- faults maps a txn_id, written exactly as in the ledger, to the list of its fault codes, written exactly as \
above. List only rows that have faults; use {{}} when no row has one.
- Only the last <answer> block in your reply is read; text outside it is ignored."""

_ASKED = re.compile(r"^BAS labels to report: (.+)$", re.MULTILINE)
_PERIOD = re.compile(r"\((\d{4}-\d{2}-\d{2}) to (\d{4}-\d{2}-\d{2})\)", re.ASCII)
_LEDGER = re.compile(r"```csv\n(.*?)\n```", re.DOTALL)


def user_prompt(business: str, quarter: Quarter, rows: list[Row], labels: Sequence[str] = LABELS) -> str:
    """The task: the business, the quarter, which labels to report (when not all four) and the ledger."""
    asked = "" if tuple(labels) == LABELS else f"BAS labels to report: {', '.join(labels)} (only these)\n"
    return (
        f"Business: {business} Pty Ltd\n"
        f"BAS quarter: {quarter.describe()}\n"
        f"{asked}"
        f"Ledger ({len(rows)} rows):\n"
        f"```csv\n{to_csv(rows)}\n```"
    )


def read_ledger(text: str) -> tuple[Quarter, list[Row]]:
    """The quarter and rows stated in a user prompt (raises ValueError when they are not there)."""
    period, ledger = _PERIOD.search(text), _LEDGER.search(text)
    if period is None or ledger is None:
        raise ValueError("prompt has no BAS quarter or no csv ledger block")
    quarter = Quarter(date.fromisoformat(period.group(1)), date.fromisoformat(period.group(2)))
    return quarter, from_csv(ledger.group(1))


def read_labels(text: str) -> tuple[str, ...]:
    """The BAS labels a user prompt asks for, in `LABELS` order (all four when it names none)."""
    match = _ASKED.search(text)
    if match is None:
        return LABELS
    named = match.group(1).removesuffix(" (only these)").split(", ")
    if not named or len(set(named)) != len(named) or not set(named) <= set(LABELS):
        raise ValueError(f"prompt asks for unknown or repeated BAS labels: {named}")
    return tuple(label for label in LABELS if label in named)
