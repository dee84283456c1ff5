"""The task text: the whole Lone Pine rulebook and rate table, so the prompt alone fixes the key.

`SYSTEM_PROMPT` states every rule `rules.reconcile` applies; `user_prompt` shows one business,
its ZIP, the filing quarter and the ledger. `read_ledger` inverts `user_prompt`, recovering
exactly what the model was shown, and `read_figures` the figures it asks for; the oracle policy
and `validate()` work from them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from us_sut_reconciliation_v1.ledger import EXEMPT, TAXABLE, Quarter, Row, from_csv, to_csv
from us_sut_reconciliation_v1.rules import CERT_THRESHOLD, FIGURES, LOCAL_RATES, STATE_RATE

_RATE_TABLE = "\n".join(
    f"| {zip_code} | {place} | {local:.3f}% | {STATE_RATE + local:.3f}% |"
    for zip_code, (place, local) in LOCAL_RATES.items()
)

SYSTEM_PROMPT = f"""You prepare the quarterly sales and use tax return of a business in the State of \
Lone Pine. Lone Pine is fictional and its rulebook is illustrative: use the rules and rates below, not \
the law of any real state. You are given one quarter's ledger. Audit every row for faults, then report \
the corrected return.

LEDGER COLUMNS
- transaction_id: the row's identifier. Rows are in ledger order; "earlier" means higher up the list.
- invoice_number: the invoice the row records.
- date: YYYY-MM-DD.
- type: sale (the business sold) or purchase (the business bought).
- category: what was sold or bought (see CATEGORIES).
- gross_amount: the pre-tax price in USD. It is never wrong and never corrected.
- tax_collected_or_paid: on a sale, the sales tax the business recorded as collected from its customer; \
on a purchase, the tax the vendor charged (0.00 when the vendor charged none). It may be wrong.
- jurisdiction_zip: the ZIP the goods or services were delivered to. Purchases are delivered to the \
business.
- tax_exempt_claimed: true when the row claims an exemption (for example a resale backed by a \
certificate), else false.
- customer_or_vendor_cert_id: the exemption or resale certificate ID backing the claim; blank when none \
was given.

CATEGORIES
- Taxable: {", ".join(TAXABLE)}.
- Exempt: {", ".join(EXEMPT)}.

RATES
The state rate is {STATE_RATE}% everywhere. Each ZIP adds a local rate; a ZIP's combined rate is the \
state rate plus its local rate:
| ZIP | place | local rate | combined rate |
|---|---|---|---|
{_RATE_TABLE}
Tax at a rate = gross_amount x rate / 100, rounded to the cent on that row alone, half a cent rounding \
up (ROUND_HALF_UP).

EXEMPTION CLAIMS
A claim (tax_exempt_claimed = true) only matters on a taxable category; an exempt category is exempt \
with or without one.
- A claim on a taxable category is honoured when customer_or_vendor_cert_id is not blank, or when \
gross_amount is ${CERT_THRESHOLD} or less. A row with an honoured claim is exempt.
- A claim on a taxable category with gross_amount over ${CERT_THRESHOLD} (strictly greater) and a blank \
customer_or_vendor_cert_id is not honoured: the row has the fault missing_exemption_cert and is treated \
as if it claimed nothing: what it owes follows from the SALES and PURCHASES rules below.

SALES
- An exempt sale is a sale whose category is exempt or whose claim is honoured. Every other sale is a \
taxable sale.
- Correct sales tax (destination sourcing): 0.00 on an exempt sale; on a taxable sale, tax at the \
combined rate of its jurisdiction_zip, the delivery ZIP, whatever the business ZIP.

PURCHASES
- Use tax is due on a purchase whose category is taxable, that has no honoured claim, and whose \
tax_collected_or_paid is 0.00; it is tax at the combined rate of the business ZIP. Every other purchase \
owes no use tax. This holds for a purchase with missing_exemption_cert too: it owes use tax when the \
vendor charged no tax, and none when the vendor charged some.
- The tax a vendor charged is never audited.

FAULT CODES
Check every row, including rows left out of the return, and report every code whose condition holds (a \
row can have several):
- tax_on_exempt_item: an exempt sale whose tax_collected_or_paid is not 0.00.
- nexus_misallocation: a taxable sale without missing_exemption_cert whose tax_collected_or_paid \
differs from its correct sales tax and equals tax at the business ZIP's combined rate (origin sourcing \
instead of destination).
- tax_miscalculated: a taxable sale without missing_exemption_cert whose tax_collected_or_paid differs \
from its correct sales tax in any other way. A row never has both this code and nexus_misallocation: \
when the wrong tax equals the tax at the business ZIP's combined rate, the code is nexus_misallocation.
- duplicate_invoice: the row's invoice_number already appears on an earlier row. The first occurrence \
is not a fault; every later one is.
- outside_period: the date is outside the filing quarter (its first and last days are inside).
- missing_exemption_cert: as stated under EXEMPTION CLAIMS, on a sale or a purchase. Its recorded tax \
is not checked further.
Purchases can only have duplicate_invoice, outside_period and missing_exemption_cert.

CORRECTED RETURN (USD, exact to the cent)
- Leave out entirely every row flagged duplicate_invoice or outside_period.
- gross_sales = sum of gross_amount over the remaining sales, exempt ones included.
- exempt_sales = sum of gross_amount over the remaining exempt sales.
- taxable_sales = gross_sales - exempt_sales.
- sales_tax_due = sum of the correct sales tax over the remaining sales.
- use_tax_due = sum of the use tax due over the remaining purchases.
- net_remittance = sales_tax_due + use_tax_due.
The recorded tax_collected_or_paid never enters the figures; only the correct tax does.

ANSWER FORMAT
Finish with one <answer> block holding a JSON object with exactly these keys: the six figures gross_sales, \
exempt_sales, taxable_sales, sales_tax_due, use_tax_due and net_remittance, and faults. When the task \
names the figures to report, give only those figures (and faults). exempt_sales is asked for but never \
graded; every other figure asked for is graded.
<answer>
{{"gross_sales": "52310.40", "exempt_sales": "9120.00", "taxable_sales": "43190.40", "sales_tax_due": \
"3512.77", "use_tax_due": "206.15", "net_remittance": "3718.92", "faults": {{"txn_004": \
["nexus_misallocation"], "txn_019": ["missing_exemption_cert", "outside_period"]}}}}
</answer>
- Figures may be JSON numbers or strings; "$" and thousands commas are ignored; they must be exact to \
the cent.
- faults maps a transaction_id, written exactly as in the ledger, to the list of its fault codes, \
written exactly as above. List only rows that have faults; use {{}} when no row has one.
- Only the last <answer> block in your reply is read; text outside it is ignored."""

_ASKED = re.compile(r"^Figures to report: (.+)$", re.MULTILINE)
_BUSINESS_ZIP = re.compile(r"^Business ZIP: (\d{5})$", re.MULTILINE | re.ASCII)
_QUARTER = re.compile(r"^Filing quarter: (\d{4}) Q([1-4])\b", re.MULTILINE | re.ASCII)
_LEDGER = re.compile(r"```csv\n(.*?)\n```", re.DOTALL)


def user_prompt(
    business: str, business_zip: str, quarter: Quarter, rows: list[Row], figures: Sequence[str] = FIGURES
) -> str:
    """The task: the business, its ZIP, the quarter, which figures to report (when not all six), the ledger."""
    place = LOCAL_RATES[business_zip][0]
    asked = "" if tuple(figures) == FIGURES else f"Figures to report: {', '.join(figures)} (only these)\n"
    return (
        f"Business: {business}, {place}, State of Lone Pine\n"
        f"Business ZIP: {business_zip}\n"
        f"Filing quarter: {quarter.describe()}\n"
        f"{asked}"
        f"Ledger ({len(rows)} rows):\n"
        f"```csv\n{to_csv(rows)}\n```"
    )


def read_ledger(text: str) -> tuple[Quarter, str, list[Row]]:
    """The quarter, business ZIP and rows a user prompt states (ValueError when they are not there)."""
    quarter, business_zip, ledger = _QUARTER.search(text), _BUSINESS_ZIP.search(text), _LEDGER.search(text)
    if quarter is None or business_zip is None or ledger is None:
        raise ValueError("prompt has no filing quarter, no business ZIP or no csv ledger block")
    year, number = int(quarter.group(1)), int(quarter.group(2))
    return Quarter(year, number), business_zip.group(1), from_csv(ledger.group(1))


def read_figures(text: str) -> tuple[str, ...]:
    """The figures a user prompt asks for, in `FIGURES` order (all six when it names none)."""
    match = _ASKED.search(text)
    if match is None:
        return FIGURES
    named = match.group(1).removesuffix(" (only these)").split(", ")
    if len(set(named)) != len(named) or not set(named) <= set(FIGURES):
        raise ValueError(f"prompt asks for unknown or repeated figures: {named}")
    return tuple(name for name in FIGURES if name in named)
