"""The task text: every rule `rules.reconcile` applies, stated so the prompt alone fixes the key.

`read_ledger` and `read_labels` invert `user_prompt`: they recover the quarter, the rows and the
labels asked for from the text the model is shown, which is what the oracle policy and
`validate()` work from.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date
from typing import NamedTuple

from piv_core.ledger_audit.grading import LEFT_OUT, figure_of, verdict
from piv_core.ledger_audit.grading import worksheet as ledger_worksheet
from piv_core.runtime import calculator

from au_bas_reconciliation_v1.ledger import (
    GST_FREE,
    INPUT_TAXED,
    SALE,
    TAXABLE,
    Quarter,
    Row,
    from_csv,
    to_csv,
)
from au_bas_reconciliation_v1.rules import (
    ABN_THRESHOLD,
    DUPLICATE_INVOICE,
    FAULT_CODES,
    GST_MISCALCULATED,
    GST_ON_GST_FREE,
    LABELS,
    MISSING_ABN_OVER_THRESHOLD,
    OUTSIDE_PERIOD,
)

_INTRO = (
    "You are a bookkeeper preparing an Australian Business Activity Statement (BAS) for one quarter. "
    "You are given the quarter's GST ledger. Audit it for faults, then report the corrected BAS figures."
)
MARKER = _INTRO.split(". ")[0] + "."
"""The opening sentence every system prompt of this environment starts with (how the baseline
endpoint tells this environment's requests apart, whatever the prompt's style)."""

_COLUMNS = """LEDGER COLUMNS
- txn_id: the row's identifier. Rows are listed in ledger order; "earlier" means higher up the list.
- date: YYYY-MM-DD.
- type: sale or purchase.
- counterparty, invoice: who the supply was with and the invoice number.
- category: the kind of supply (see below).
- amount: the GST-inclusive price in AUD. It is never wrong and never corrected.
- gst: the GST recorded in the books for the row (it may be wrong).
- abn: the supplier's ABN on a purchase; blank when the supplier gave none. Sales have no ABN."""

_CATEGORIES = f"""CATEGORIES
- Taxable: {", ".join(TAXABLE)}.
- GST-free: {", ".join(GST_FREE)}.
- Input-taxed: {", ".join(INPUT_TAXED)}."""

_CORRECT_GST = """CORRECT GST OF A ROW
- Taxable category: amount / 11, rounded to the cent on that row alone, half a cent rounding up (ROUND_HALF_UP).
- GST-free or input-taxed category: 0.00."""

CODE_RULES = {
    GST_ON_GST_FREE: "- gst_on_gst_free: the category is GST-free or input-taxed and the recorded gst is not 0.00.",
    GST_MISCALCULATED: (
        "- gst_miscalculated: the category is taxable and the recorded gst differs from the correct GST."
    ),
    DUPLICATE_INVOICE: (
        "- duplicate_invoice: the row's invoice number already appears on an earlier row. The first "
        "occurrence is not a fault; every later occurrence is."
    ),
    OUTSIDE_PERIOD: (
        "- outside_period: the date is outside the BAS quarter. The quarter's first and last days are inside it."
    ),
    MISSING_ABN_OVER_THRESHOLD: (
        f"- missing_abn_over_threshold: a purchase whose amount is over ${ABN_THRESHOLD} (strictly greater) "
        "with a blank abn, whatever its category. The input tax credit is denied."
    ),
}
"""Each fault code's condition, one line apiece, as every prompt states it."""

_LEAVE_OUT = "- Leave out entirely every row flagged duplicate_invoice or outside_period."
_LABEL_RULES = {
    "G1": "- G1 (total sales) = sum of amount over the remaining sales, every category included.",
    "1A": "- 1A (GST on sales) = sum of the correct GST over the remaining sales.",
    "1B": "- 1B (GST on purchases) = sum of the correct GST over the remaining purchases",
    "net": "- net = 1A - 1B (negative when a refund is due).",
}
_DENIED = ", except that a purchase flagged missing_abn_over_threshold contributes 0.00."
_NOT_RECORDED = "The recorded gst column never enters the figures; only the correct GST does."
_FIGURES_RULE = '- Figures may be JSON numbers or strings; "$" and thousands commas are ignored; they must be exact to the cent.'
_FAULTS_RULE = """- faults maps a txn_id, written exactly as in the ledger, to the list of its fault codes, written exactly as \
above. List only rows that have faults; use {} when no row has one."""
_LAST_RULE = "- Only the last <answer> block in your reply is read; text outside it is ignored."
_FORMAT_RULES = f"{_FIGURES_RULE}\n{_FAULTS_RULE}\n{_LAST_RULE}"

SYSTEM_PROMPT = f"""{_INTRO}

{_COLUMNS}

{_CATEGORIES}

{_CORRECT_GST}

FAULT CODES
Check every row, including rows that are left out of the BAS, and report every code whose condition holds \
(a row can have several):
{chr(10).join(CODE_RULES.values())}

CORRECTED BAS (dollars and cents, exact to the cent)
{_LEAVE_OUT}
{_LABEL_RULES["G1"]}
{_LABEL_RULES["1A"]}
{_LABEL_RULES["1B"]}{_DENIED}
{_LABEL_RULES["net"]}
{_NOT_RECORDED}

ANSWER FORMAT
Finish with one <answer> block holding a JSON object with exactly these keys: the four labels G1, 1A, 1B \
and net, and faults. When the task names the labels to report, give only those labels (and faults): only \
they are graded.
<answer>
{{"G1": "12345.67", "1A": "1122.33", "1B": "456.78", "net": "665.55", "faults": {{"T003": ["gst_miscalculated"], \
"T011": ["outside_period", "gst_on_gst_free"]}}}}
</answer>
{_FORMAT_RULES}"""
"""The system prompt of the default configuration: every fault code and every label (style ``full``)."""

FULL, FOCUSED = "full", "focused"
PROMPT_STYLES = (FULL, FOCUSED)
ALL_OR_NOTHING, PARTIAL = "all_or_nothing", "partial"
FIGURE_CREDITS = (ALL_OR_NOTHING, PARTIAL)

PARTIAL_CREDIT_NOTE = """GRADING OF THE FIGURES
Each label asked for counts on its own: the figures part of the score is the share of those labels that \
are exact to the cent (with two labels asked and one of them right, half of it)."""
"""What a prompt says when partial credit per label is on (`figure_credit` ``partial``)."""
ROW_KEY = "gst"
"""The answer key of the per-row figures (`row_figures`): {txn_id: the row's correct GST}."""
ROW_RULE = (
    f"- {ROW_KEY} maps every txn_id of the ledger, written exactly as there, to that row's correct GST "
    "(CORRECT GST OF A ROW): one entry per row, 0.00 for a GST-free or input-taxed row. faults may also "
    "list a row that has no fault, as []: such a row counts as not listed."
)
"""The answer-format rule of a task that asks for every row's correct GST."""
CLAIMS_ROW_RULE = ROW_RULE.partition(" faults may also")[0]
"""`ROW_RULE` of a task that asks no fault map."""
CLAIMS_RULE = (
    f"You do not list them: your {ROW_KEY} map reports them. A row whose entry in {ROW_KEY} differs from its "
    "recorded gst is reported with the code of its category: gst_on_gst_free for a GST-free or input-taxed "
    "row, gst_miscalculated for a taxable one. Their conditions:"
)
"""How a task that reads the faults from the per-row figures (`faults_from_figures`) says so, in
place of asking for them."""
CLAIMED_CODES = (GST_ON_GST_FREE, GST_MISCALCULATED)
"""The codes `CLAIMS_RULE` names: such a task states exactly these."""
CLAIMS_CREDIT_NOTE = f"""GRADING
Only corrections score. The score is 0.6 x the figures part + 0.4 x the fault part.
- Figures part: the share, of the labels asked and the rows that have a fault, of those you get right. A \
label is right when exact to the cent; a row that has a fault is right when its entry in {ROW_KEY} is its \
correct GST to the cent. A row without a fault is not part of that share.
- Fault part: F1 of the rows your {ROW_KEY} entries report (an entry that differs from the row's recorded \
gst) against the rows that have a fault, where a row counts as found only when its entry in {ROW_KEY} is its \
correct GST; every row reported counts in the precision."""
"""What a prompt that reads the faults from the per-row figures says under partial credit."""
ROW_CREDIT_NOTE = f"""GRADING
Only corrections score. The score is 0.6 x the figures part + 0.4 x the fault part.
- Figures part: the share, of the labels asked and the rows that have a fault, of those you get right. A \
label is right when exact to the cent; a row that has a fault is right when faults lists it with a code and \
its entry in {ROW_KEY} is its correct GST to the cent. A row without a fault is not part of that share.
- Fault part: F1 of the (txn_id, code) pairs in faults against the true ones, where a pair counts as found \
only when that row's entry in {ROW_KEY} is its correct GST; every pair listed counts in the precision."""
"""What a prompt that asks for the per-row figures says under partial credit."""

_WORKING = """HOW TO WORK
Before the answer block, work through the ledger in plain text, one line per row: the row's txn_id, its \
type and category, its correct GST (for a taxable row, this row's own amount / 11, to the cent), whether \
the recorded gst equals it, and the fault codes that hold. Then add up each label from those lines."""
WORK_FIRST = (
    "First write one line per row, in this form:\n"
    "<txn_id>: <category> is <taxable, GST-free or input-taxed>; correct GST <amount>; recorded gst <gst>; "
    "<the fault codes that hold, or no fault>\n"
    "Then add up the labels from those lines, and finish with the <answer> block."
)
"""The closing line of a focused task's user prompt."""
WORK_FIRST_FIGURES = (
    "First write one line per row, in this form:\n"
    "<txn_id>: <category> is <taxable, GST-free or input-taxed>. Correct GST = <amount> / 11 = <result> "
    "(0.00 when not taxable). gst of <txn_id>: <result>\n"
    "Then add up the labels from those lines, and finish with the <answer> block."
)
"""`WORK_FIRST` of a task that reads the faults from the per-row figures: no comparison and no codes,
the division written out as the worksheet writes it."""
_WORKING_FIGURES = """HOW TO WORK
Before the answer block, work through the ledger in plain text, one line per row: the row's txn_id, its \
category, and its correct GST (for a taxable row, this row's own amount / 11, to the cent). Then add up each \
label from those lines."""
"""How a task that reads the faults from the per-row figures asks for the working."""


def treatment_of(category: str) -> str:
    """A category's GST treatment as the prompt names it: taxable, GST-free or input-taxed."""
    return "taxable" if category in TAXABLE else "GST-free" if category in GST_FREE else "input-taxed"


_SUMMED = {
    "G1": "the sum of amount over the sales",
    "1A": "the sum of the correct GST of the sales",
    "1B": "the sum of the correct GST of the purchases",
    "net": "1A - 1B",
}
"""Each label as a worksheet's answer line says to work it out (`worksheet`: no row is left out there)."""
COMPARED_CODES = (GST_ON_GST_FREE, GST_MISCALCULATED)
"""The fault codes a row's recorded gst against its correct GST decides alone: the only ones a
task that asks for every row's correct GST may plant, so that each worksheet line's `verdict`
is the whole of that row's audit."""


def worksheet(
    rows: Sequence[Row], labels: Sequence[str], calculator_offered: bool = False, from_figures: bool = False
) -> str:
    """The closing part of a user prompt that asks for every row's correct GST (`ROW_KEY`): one
    line per row to copy and complete (its category's treatment stated, a taxable row's division
    written out with the result left open, then the comparison with the recorded gst and the
    fault it gives), a line adding up 1A over the sales and one adding up 1B over the purchases
    (each where asked and there are such rows), and the answer line with this ledger's txn_ids in place.
    `from_figures` (the faults read from the figures): each row's line ends on its figure, with no
    comparison, and the answer line has no fault map."""
    lines = []
    for row in rows:
        treatment = treatment_of(row.category)
        if treatment == "taxable":
            work, code, figure = f"Correct GST = {row.amount} / 11 = <result>.", GST_MISCALCULATED, "<result>"
        else:
            work, code, figure = "Correct GST = 0.00.", GST_ON_GST_FREE, "0.00"
        named = figure_of(ROW_KEY, row.txn_id)
        check = (
            f"{named}: {figure}" if from_figures else verdict(f"recorded gst {row.gst}", figure, code, named)
        )
        lines.append(f"{row.txn_id}: {row.category} is {treatment}. {work} {check}")
    asked = {label: _SUMMED[label] for label in LABELS if label in labels}
    stated = {row.txn_id: "0.00" for row in rows if treatment_of(row.category) != "taxable"}
    sales = [row.txn_id for row in rows if row.kind == SALE]
    purchases = [row.txn_id for row in rows if row.kind != SALE]
    sums = {label: ids for label, ids in (("1A", sales), ("1B", purchases)) if label in asked and ids}
    closing = calculator.USER_NOTE if calculator_offered else None
    txn_ids = [row.txn_id for row in rows]
    return ledger_worksheet(
        lines, asked, ROW_KEY, txn_ids, ROW_KEY, stated, sums, closing, fault_map=not from_figures
    )


def _focused(
    codes: Sequence[str], labels: Sequence[str], rows: bool = False, from_figures: bool = False
) -> str:
    """The system prompt of style ``focused``: the rules of the fault codes `codes` and of the
    labels `labels` only, an invitation to work row by row, and an answer example without figures;
    `rows`: the answer holds every row's correct GST too (`ROW_KEY`); `from_figures` (with `rows`):
    and no fault map, the faults being read from those figures (`CLAIMS_RULE`)."""
    rules_of = [CODE_RULES[code] for code in FAULT_CODES if code in codes]
    left_out = any(code in codes for code in LEFT_OUT)
    bas = [_LEAVE_OUT] if left_out else []
    for label in LABELS:
        if label in labels or (label in ("1A", "1B") and "net" in labels):
            rule = (
                _LABEL_RULES[label] if left_out else _LABEL_RULES[label].replace(" the remaining ", " the ")
            )
            denied = _DENIED if MISSING_ABN_OVER_THRESHOLD in codes else "."
            bas.append(rule + (denied if label == "1B" else ""))
    asked = [label for label in LABELS if label in labels]
    example = ", ".join(f'"{label}": "<dollars.cents>"' for label in asked)
    keys = ", ".join(asked)
    if rows:
        example += f', "{ROW_KEY}": {{"<txn_id>": "<dollars.cents>"}}'
        keys += f", {ROW_KEY}"
    which = (
        "code of this task is the one"
        if len(rules_of) == 1
        else f"codes of this task are the {len(rules_of)}"
    )
    if from_figures:
        check = CLAIMS_RULE
        answer_keys, what = f"{' and '.join(keys.rsplit(', ', 1))}.", "figures and txn_ids"
        answer_line, format_rules = example, f"{_FIGURES_RULE}\n{_LAST_RULE}\n{CLAIMS_ROW_RULE}"
    else:
        check = (
            f"Check every row{', including rows that are left out of the BAS,' if left_out else ''} and report "
            f"every code whose condition holds{' (a row can have several)' if len(rules_of) > 1 else ''}:"
        )
        answer_keys, what = f"{keys} and faults.", "figures, txn_ids and codes"
        answer_line = f'{example}, "faults": {{"<txn_id>": ["<fault_code>"]}}'
        format_rules = _FORMAT_RULES + (f"\n{ROW_RULE}" if rows else "")
    return f"""{_INTRO}

{_COLUMNS}

{_CATEGORIES}

{_CORRECT_GST}

FAULT CODES
The only fault {which} below; no other code is reported. {check}
{chr(10).join(rules_of)}

CORRECTED BAS (dollars and cents, exact to the cent)
{chr(10).join(bas)}
{_NOT_RECORDED}

{_WORKING_FIGURES if from_figures else _WORKING}

ANSWER FORMAT
Finish with one <answer> block holding a JSON object with exactly these keys: {answer_keys} \
The block below shows its shape only: put this ledger's own {what} in \
place of the <...> placeholders. The <answer> and </answer> tags are required: a JSON object or \
code block without them is not read.
<answer>
{{{answer_line}}}
</answer>
{format_rules}"""


def system_prompt(
    style: str = FULL,
    codes: Sequence[str] = FAULT_CODES,
    labels: Sequence[str] = LABELS,
    credit: str = ALL_OR_NOTHING,
    rows: bool = False,
    from_figures: bool = False,
) -> str:
    """The system prompt of a task: `SYSTEM_PROMPT` itself at the default configuration.

    Style ``focused`` states only the fault codes `codes` (the ones the task can plant, no
    other ever holds there) and the labels `labels`; ``full`` states everything. Under partial
    credit (`credit` ``partial``) the prompt says how the figures are scored. `rows` (focused
    only): the answer also holds every row's correct GST under `ROW_KEY`; `from_figures` (with
    `rows`, partial credit and the `CLAIMED_CODES`): and no fault map, the faults being read from
    those figures."""
    if style not in PROMPT_STYLES or credit not in FIGURE_CREDITS:
        raise ValueError(f"unknown prompt style {style!r} or figure credit {credit!r}")
    if rows and style != FOCUSED:
        raise ValueError("per-row figures need the focused prompt style")
    if from_figures and not (rows and credit == PARTIAL and set(codes) == set(CLAIMED_CODES)):
        raise ValueError(
            "faults read from the figures need per-row figures, partial credit and both compared codes"
        )
    text = SYSTEM_PROMPT if style == FULL else _focused(codes, labels, rows, from_figures)
    note = CLAIMS_CREDIT_NOTE if from_figures else ROW_CREDIT_NOTE if rows else PARTIAL_CREDIT_NOTE
    return text + "\n\n" + note if credit == PARTIAL else text


class PromptScope(NamedTuple):
    """What a system prompt states: its style, the fault codes it lists, its figure credit,
    whether it asks for every row's correct GST, and whether it reads the faults from those."""

    style: str
    codes: tuple[str, ...]
    credit: str
    rows: bool = False
    from_figures: bool = False


def read_scope(system: str) -> PromptScope:
    """The style, fault codes and figure credit a system prompt of this environment states
    (read from the text, the calculator's section aside; `system_prompt` of them must give the same
    text back)."""
    system = calculator.offered(system)[1]
    notes = tuple(f"\n\n{note}" for note in (PARTIAL_CREDIT_NOTE, ROW_CREDIT_NOTE, CLAIMS_CREDIT_NOTE))
    credit = PARTIAL if system.endswith(notes) else ALL_OR_NOTHING
    style = FULL if system.startswith(SYSTEM_PROMPT) else FOCUSED
    codes = tuple(code for code in FAULT_CODES if f"\n{CODE_RULES[code]}\n" in system)
    from_figures = f" {CLAIMS_RULE}\n" in system
    rows = f"\n{ROW_RULE}" in system or (from_figures and f"\n{CLAIMS_ROW_RULE}" in system)
    return PromptScope(style, codes, credit, rows, from_figures)


_ASKED = re.compile(r"^BAS labels to report: (.+)$", re.MULTILINE)
_PERIOD = re.compile(r"\((\d{4}-\d{2}-\d{2}) to (\d{4}-\d{2}-\d{2})\)", re.ASCII)
_LEDGER = re.compile(r"```csv\n(.*?)\n```", re.DOTALL)


def user_prompt(
    business: str,
    quarter: Quarter,
    rows: list[Row],
    labels: Sequence[str] = LABELS,
    style: str = FULL,
    per_row: bool = False,
    calculator_offered: bool = False,
    sheet_served: bool = True,
    from_figures: bool = False,
) -> str:
    """The task: the business, the quarter, which labels to report (when not all four) and the
    ledger; under a focused system prompt, a closing line asking for the working first, or with
    `per_row` (every row's correct GST asked) and `sheet_served` the `worksheet` to complete
    (`from_figures`: the ones of a task that reads the faults from the figures)."""
    asked = "" if tuple(labels) == LABELS else f"BAS labels to report: {', '.join(labels)} (only these)\n"
    sheet = per_row and style == FOCUSED and sheet_served
    if sheet:
        closing = f"\n\n{worksheet(rows, labels, calculator_offered, from_figures)}"
    else:
        closing = f"\n\n{WORK_FIRST_FIGURES if from_figures else WORK_FIRST}" if style == FOCUSED else ""
    text = (
        f"Business: {business} Pty Ltd\n"
        f"BAS quarter: {quarter.describe()}\n"
        f"{asked}"
        f"Ledger ({len(rows)} rows):\n"
        f"```csv\n{to_csv(rows)}\n```" + closing
    )
    return text if sheet else calculator.with_note(text, calculator_offered)


def read_ledger(text: str) -> tuple[Quarter, list[Row]]:
    """The quarter and rows stated in a user prompt (raises ValueError when they are not there)."""
    period, ledger = _PERIOD.search(text), _LEDGER.search(text)
    if period is None or ledger is None:
        raise ValueError("prompt has no BAS quarter or no csv ledger block")
    quarter = Quarter(date.fromisoformat(period.group(1)), date.fromisoformat(period.group(2)))
    return quarter, from_csv(ledger.group(1))


def read_business(text: str) -> str:
    """The business a user prompt names (its first line, less the words around the name)."""
    return text.partition("\n")[0].removeprefix("Business: ").removesuffix(" Pty Ltd")


def read_labels(text: str) -> tuple[str, ...]:
    """The BAS labels a user prompt asks for, in `LABELS` order (all four when it names none)."""
    match = _ASKED.search(text)
    if match is None:
        return LABELS
    named = match.group(1).removesuffix(" (only these)").split(", ")
    if not named or len(set(named)) != len(named) or not set(named) <= set(LABELS):
        raise ValueError(f"prompt asks for unknown or repeated BAS labels: {named}")
    return tuple(label for label in LABELS if label in named)
