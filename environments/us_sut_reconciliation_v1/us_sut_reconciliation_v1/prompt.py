"""The task text: the whole Lone Pine rulebook and rate table, so the prompt alone fixes the key.

`SYSTEM_PROMPT` states every rule `rules.reconcile` applies; `user_prompt` shows one business,
its ZIP, the filing quarter and the ledger. `read_ledger` inverts `user_prompt`, recovering
exactly what the model was shown, and `read_figures` the figures it asks for; the oracle policy
and `validate()` work from them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from piv_core.ledger_audit.grading import LEFT_OUT
from piv_core.runtime import calculator

from us_sut_reconciliation_v1.ledger import EXEMPT, TAXABLE, Quarter, Row, from_csv, to_csv
from us_sut_reconciliation_v1.rules import (
    CERT_THRESHOLD,
    DUPLICATE_INVOICE,
    FAULT_CODES,
    FIGURES,
    LOCAL_RATES,
    MISSING_EXEMPTION_CERT,
    NEXUS_MISALLOCATION,
    OUTSIDE_PERIOD,
    STATE_RATE,
    TAX_MISCALCULATED,
)
from us_sut_reconciliation_v1.worksheet import ROW_KEY, worksheet

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

"""The system prompt of the default configuration: every fault code and figure (style ``full``)."""

MARKER = SYSTEM_PROMPT.split(". ")[0] + "."
"""The opening sentence every system prompt of this environment starts with (how the baseline
endpoint tells this environment's requests apart, whatever the prompt's style)."""

FULL, FOCUSED = "full", "focused"
PROMPT_STYLES = (FULL, FOCUSED)
ALL_OR_NOTHING, PARTIAL = "all_or_nothing", "partial"
FIGURE_CREDITS = (ALL_OR_NOTHING, PARTIAL)

PARTIAL_CREDIT_NOTE = """GRADING OF THE FIGURES
Each graded figure asked for counts on its own: the return part of the score is the share of those \
figures that are exact to the cent (with two graded figures asked and one of them right, half of it)."""
"""What a prompt says when partial credit per figure is on (`figure_credit` ``partial``)."""

ROW_RULE = (
    f"- {ROW_KEY} maps every transaction_id of the ledger, written exactly as there, to that row's correct "
    "tax (on a sale its correct sales tax, 0.00 when exempt; on a purchase the use tax due): one entry per "
    "row. faults may also list a row that has no fault, as []: such a row counts as not listed."
)
"""The answer-format rule of a task that asks for every row's correct tax."""
LEFT_OUT_ROW_RULE = (
    "A row left out of the return has its entry too: its correct tax as these rules give it, although "
    "it does not enter the figures."
)
"""What that rule adds when some rows are left out of the return (``outside_period`` or
``duplicate_invoice`` among the task's codes)."""
ROW_CREDIT_NOTE = f"""GRADING
Only corrections score. The score is 0.6 x the return part + 0.4 x the fault part.
- Return part: the share, of the graded figures asked and the rows that have a fault, of those you get \
right. A figure is right when exact to the cent; a row that has a fault is right when faults lists it with \
a code and its entry in {ROW_KEY} is its correct tax to the cent. A row without a fault is not part of that \
share.
- Fault part: F1 of the (transaction_id, code) pairs in faults against the true ones, where a pair counts \
as found only when that row's entry in {ROW_KEY} is its correct tax; every pair listed counts in the \
precision."""
"""What a prompt that asks for the per-row figures says under partial credit."""

_WORKING = """HOW TO WORK
Before the answer block, work through the ledger in plain text, one line per row: the row's \
transaction_id, its type and category, whether it is exempt, its correct tax (gross_amount x the \
combined rate of the ZIP that applies, read from RATES, / 100, to the cent; 0.00 on an exempt sale), \
whether the recorded tax_collected_or_paid equals it, and the fault codes that hold. Then add up each figure from those lines."""
WORK_FIRST = (
    "First write one line per row, in this form:\n"
    "<transaction_id>: <category> is <exempt or taxable>; correct tax <amount>; recorded tax "
    "<tax_collected_or_paid>; <the fault codes that hold, or no fault>\n"
    "Then add up the figures from those lines, and finish with the <answer> block."
)
"""The closing line of a focused task's user prompt."""


def _section(text: str, head: str, next_head: str) -> tuple[int, int]:
    start = text.index(f"\n\n{head}\n") + 2
    return start, text.index(f"\n\n{next_head}", start)


def _code_lines(full: str, codes: Sequence[str]) -> list[str]:
    """The full prompt's line of each code of `codes`, reworded where it names a code left out."""
    lines = {line[2:].split(":", 1)[0]: line for line in full.splitlines() if line.startswith("- ")}
    out = []
    for code in FAULT_CODES:
        if code not in codes:
            continue
        line = lines[code]
        if code == TAX_MISCALCULATED and NEXUS_MISALLOCATION not in codes:
            line = line[: line.index(" in any other way.")] + "."
        if MISSING_EXEMPTION_CERT not in codes:
            line = line.replace(" without missing_exemption_cert", "")
        out.append(line)
    return out


def _focused(codes: Sequence[str], figures: Sequence[str], rows: bool = False) -> str:
    """The system prompt of style ``focused``: the rules as the full prompt states them, but only
    the fault codes `codes` and the figures `figures`, an invitation to work row by row, and an
    answer example without figures; `rows`: the answer holds every row's correct tax too
    (`ROW_KEY`)."""
    text = SYSTEM_PROMPT
    if MISSING_EXEMPTION_CERT not in codes:
        text = text.replace(
            "the row has the fault missing_exemption_cert and is treated", "the row is treated"
        )
        text = text.replace(
            "for a purchase with missing_exemption_cert too", "for a purchase whose claim is not honoured too"
        )
    start, end = _section(text, "FAULT CODES", "CORRECTED RETURN")
    lines = _code_lines(SYSTEM_PROMPT, codes)
    left_out = [code for code in LEFT_OUT if code in codes]
    which = "code of this task is the one" if len(lines) == 1 else f"codes of this task are the {len(lines)}"
    purchase_codes = [c for c in (DUPLICATE_INVOICE, OUTSIDE_PERIOD, MISSING_EXEMPTION_CERT) if c in codes]
    only = (
        [
            f"Purchases can only have {' and '.join(purchase_codes)}."
            if purchase_codes
            else "Purchases have none."
        ]
        if len(purchase_codes) < len(lines)
        else []
    )
    faults = "\n".join(
        [
            "FAULT CODES",
            f"The only fault {which} below; no other code is reported. Check every row"
            + (", including rows left out of the return," if left_out else "")
            + " and report every code whose condition holds"
            + (" (a row can have several):" if len(lines) > 1 else ":"),
            *lines,
            *only,
        ]
    )
    text = text[:start] + faults + text[end:]
    start, end = _section(text, "CORRECTED RETURN (USD, exact to the cent)", "ANSWER FORMAT")
    needed = set(figures)
    if "taxable_sales" in needed:
        needed |= {"gross_sales", "exempt_sales"}
    if "net_remittance" in needed:
        needed |= {"sales_tax_due", "use_tax_due"}
    kept = []
    for line in text[start:end].splitlines():
        name = line[2:].split(" ", 1)[0] if line.startswith("- ") else None
        if name == "Leave":
            if left_out:
                kept.append(line.replace(" or ".join(LEFT_OUT), " or ".join(left_out)))
        elif name is None or name in needed:
            kept.append(line if left_out else line.replace(" the remaining ", " the "))
    text = text[:start] + "\n".join(kept) + text[end:]
    asked = [name for name in FIGURES if name in figures]
    graded = "" if "exempt_sales" not in asked else " exempt_sales is asked for but never graded."
    example = ", ".join(f'"{name}": "<dollars.cents>"' for name in asked)
    keys = ", ".join(asked)
    if rows:
        example += f', "{ROW_KEY}": {{"<transaction_id>": "<dollars.cents>"}}'
        keys += f", {ROW_KEY}"
    start = text.index("\n\nANSWER FORMAT\n") + 2
    return (
        text[:start]
        + _WORKING
        + f"""

ANSWER FORMAT
Finish with one <answer> block holding a JSON object with exactly these keys: {keys} and \
faults.{graded} The block below shows its shape only: put this ledger's own figures, transaction_ids and \
codes in place of the <...> placeholders. The <answer> and </answer> tags are required: a JSON object \
or code block without them is not read.
<answer>
{{{example}, "faults": {{"<transaction_id>": ["<fault_code>"]}}}}
</answer>
"""
        + text[text.index("- Figures may be JSON numbers") :]
        + ("\n" + ROW_RULE if rows else "")
        + (" " + LEFT_OUT_ROW_RULE if rows and left_out else "")
    )


def system_prompt(
    style: str = FULL,
    codes: Sequence[str] = FAULT_CODES,
    figures: Sequence[str] = FIGURES,
    credit: str = ALL_OR_NOTHING,
    rows: bool = False,
) -> str:
    """The system prompt of a task: `SYSTEM_PROMPT` itself at the default configuration.

    Style ``focused`` states only the fault codes `codes` and the figures `figures`; ``full``
    states everything. Under partial credit (`credit` ``partial``) the prompt says how the
    figures are scored. `rows` (focused only): the answer also holds every row's correct tax
    under `ROW_KEY`."""
    if style not in PROMPT_STYLES or credit not in FIGURE_CREDITS:
        raise ValueError(f"unknown prompt style {style!r} or figure credit {credit!r}")
    if rows and style != FOCUSED:
        raise ValueError("per-row figures need the focused prompt style")
    text = SYSTEM_PROMPT if style == FULL else _focused(codes, figures, rows)
    note = ROW_CREDIT_NOTE if rows else PARTIAL_CREDIT_NOTE
    return text + "\n\n" + note if credit == PARTIAL else text


class PromptScope(NamedTuple):
    """What a system prompt states: its style, the fault codes it lists, its figure credit, and
    whether it asks for every row's correct tax."""

    style: str
    codes: tuple[str, ...]
    credit: str
    rows: bool = False


def read_scope(system: str) -> PromptScope:
    """The style, fault codes and figure credit a system prompt of this environment states
    (read from the text, the calculator's section aside; `system_prompt` of them must give the same
    text back)."""
    system = calculator.offered(system)[1]
    credit = (
        PARTIAL
        if system.endswith(("\n\n" + PARTIAL_CREDIT_NOTE, "\n\n" + ROW_CREDIT_NOTE))
        else ALL_OR_NOTHING
    )
    style = FULL if system.startswith(SYSTEM_PROMPT) else FOCUSED
    listed = system.partition("\nFAULT CODES\n")[2].partition("\n\n")[0]
    codes = tuple(code for code in FAULT_CODES if f"\n- {code}: " in f"\n{listed}")
    return PromptScope(style, codes, credit, f"\n{ROW_RULE}" in system)


_ASKED = re.compile(r"^Figures to report: (.+)$", re.MULTILINE)
_BUSINESS_ZIP = re.compile(r"^Business ZIP: (\d{5})$", re.MULTILINE | re.ASCII)
_QUARTER = re.compile(r"^Filing quarter: (\d{4}) Q([1-4])\b", re.MULTILINE | re.ASCII)
_LEDGER = re.compile(r"```csv\n(.*?)\n```", re.DOTALL)


def user_prompt(
    business: str,
    business_zip: str,
    quarter: Quarter,
    rows: list[Row],
    figures: Sequence[str] = FIGURES,
    style: str = FULL,
    per_row: bool = False,
    calculator_offered: bool = False,
    dated: bool = False,
    sheet_served: bool = True,
) -> str:
    """The task: the business, its ZIP, the quarter, which figures to report (when not all six),
    the ledger; under a focused system prompt, a closing line asking for the working first, or
    with `per_row` (every row's correct tax asked) and `sheet_served` the `worksheet` to complete,
    whose lines ask each row's date against the quarter when `dated` (``outside_period`` among the
    task's codes)."""
    place = LOCAL_RATES[business_zip][0]
    asked = "" if tuple(figures) == FIGURES else f"Figures to report: {', '.join(figures)} (only these)\n"
    sheet = per_row and style == FOCUSED and sheet_served
    closing = (
        f"\n\n{worksheet(rows, figures, business_zip, calculator_offered, quarter if dated else None)}"
        if sheet
        else f"\n\n{WORK_FIRST}"
        if style == FOCUSED
        else ""
    )
    text = (
        f"Business: {business}, {place}, State of Lone Pine\n"
        f"Business ZIP: {business_zip}\n"
        f"Filing quarter: {quarter.describe()}\n"
        f"{asked}"
        f"Ledger ({len(rows)} rows):\n"
        f"```csv\n{to_csv(rows)}\n```" + closing
    )
    return text if sheet else calculator.with_note(text, calculator_offered)


def read_ledger(text: str) -> tuple[Quarter, str, list[Row]]:
    """The quarter, business ZIP and rows a user prompt states (ValueError when they are not there)."""
    quarter, business_zip, ledger = _QUARTER.search(text), _BUSINESS_ZIP.search(text), _LEDGER.search(text)
    if quarter is None or business_zip is None or ledger is None:
        raise ValueError("prompt has no filing quarter, no business ZIP or no csv ledger block")
    year, number = int(quarter.group(1)), int(quarter.group(2))
    return Quarter(year, number), business_zip.group(1), from_csv(ledger.group(1))


def read_business(text: str, business_zip: str) -> str:
    """The business a user prompt names: its first line less the place of `business_zip` (ValueError
    for a ZIP not in the rate table)."""
    if business_zip not in LOCAL_RATES:
        raise ValueError(f"business ZIP {business_zip!r} is not in the Lone Pine rate table")
    first = text.partition("\n")[0]
    return first.removeprefix("Business: ").removesuffix(
        f", {LOCAL_RATES[business_zip][0]}, State of Lone Pine"
    )


def read_figures(text: str) -> tuple[str, ...]:
    """The figures a user prompt asks for, in `FIGURES` order (all six when it names none)."""
    match = _ASKED.search(text)
    if match is None:
        return FIGURES
    named = match.group(1).removesuffix(" (only these)").split(", ")
    if len(set(named)) != len(named) or not set(named) <= set(FIGURES):
        raise ValueError(f"prompt asks for unknown or repeated figures: {named}")
    return tuple(name for name in FIGURES if name in named)
