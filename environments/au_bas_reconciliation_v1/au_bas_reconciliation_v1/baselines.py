"""Scripted policies for the baseline endpoint; each reads only the prompt it is sent.

- ``oracle``: reads the ledger out of the prompt and applies `rules.reconcile`. Scoring 1.0
  proves the prompt alone determines the key (instructions = reward).
- ``column-sums``: the raw column totals as the BAS (sales, recorded GST), no faults.
- ``silent``: a well-formed answer that finds nothing: GST recomputed per row but no row
  excluded and no credit denied, and an empty faults object.
- ``blanket``: flags every row with every fault code the system prompt states (all five in the
  full prompt), column-sum figures.
- `example` (a function, not served as a policy): the system prompt's answer example copied as
  it stands (the full prompt's figures and rows; placeholders in a focused prompt).
- ``garbage``: prose with figures but no answer block.

A policy that needs the fault codes reads them from the system prompt (the system message, or
the user message a harness folded it into); a conversation with none gets all five.

`noisy` (served as ``noisy-<p>``) is the oracle erring on each row independently with
probability p: it takes a faulted row for clean (no codes, kept in the BAS, its recorded GST
trusted) and gives a clean row a plausible wrong code (then treated as the code says; where the
faults are read from the figures, its figure a dollar off, which is how such a flag is written),
and works its labels out from its own treatment of the rows.
"""

from __future__ import annotations

import random
import re
from decimal import Decimal

from piv_core.ledger_audit.grading import answer_text, erring_audit
from piv_core.policy import Conversation, Policy, calling_first
from piv_core.runtime import calculator

from au_bas_reconciliation_v1.ledger import SALE, Row
from au_bas_reconciliation_v1.prompt import ROW_KEY, PromptScope, read_labels, read_ledger, read_scope
from au_bas_reconciliation_v1.rules import (
    FAULT_CODES,
    MISSING_ABN_OVER_THRESHOLD,
    correct_gst,
    reconcile,
    row_gst,
    totals,
)

ORACLE_NOTE = "Reconciled.\n"
_EXAMPLE = re.compile(r"^<answer>\n(.*?)\n</answer>$", re.MULTILINE | re.DOTALL)


def _system_text(conversation: Conversation) -> str:
    """The system prompt as sent: the system message, else the user text it was folded into."""
    for message in conversation.messages:
        if message.get("role") in ("system", "developer"):
            return Conversation.text(message)
    return conversation.user_text


def stated_codes(conversation: Conversation) -> tuple[str, ...]:
    """The fault codes the conversation's system prompt states (all five when it has none)."""
    return read_scope(_system_text(conversation)).codes or FAULT_CODES


def _totals(rows: list[Row], gst_of) -> dict[str, Decimal]:
    sales = [r for r in rows if r.kind == SALE]
    purchases = [r for r in rows if r.kind != SALE]
    g1 = sum((r.amount for r in sales), Decimal("0.00"))
    a1 = sum((gst_of(r) for r in sales), Decimal("0.00"))
    b1 = sum((gst_of(r) for r in purchases), Decimal("0.00"))
    return {"G1": g1, "1A": a1, "1B": b1, "net": a1 - b1}


def _scope(conversation: Conversation) -> PromptScope:
    """What the system prompt states: whether it asks every row's correct GST (`ROW_KEY`), and
    whether it reads the faults from those figures (no fault map asked)."""
    return read_scope(_system_text(conversation))


def _solve(conversation: Conversation) -> str:
    text = conversation.user_text
    quarter, rows = read_ledger(text)
    key = reconcile(quarter, rows, stated_codes(conversation)).asking(read_labels(text))
    scope = _scope(conversation)
    per_row = (ROW_KEY, row_gst(rows)) if scope.rows else None
    faults = None if scope.from_figures else key.faults
    return ORACLE_NOTE + answer_text(key.figures, faults, per_row)


def divisions(conversation: Conversation) -> list[dict[str, str]]:
    """The calculator calls of the taxable rows' divisions (amount / 11), as many as one reply may make."""
    _, rows = read_ledger(conversation.user_text)
    taxed = [r for r in rows if correct_gst(r) != 0][: calculator.CALLS_PER_TURN]
    return [{"expression": f"{r.amount} / 11"} for r in taxed]


oracle = calling_first(_solve, calculator.TOOL, divisions)
"""Reads the ledger and applies `rules.reconcile`; where the prompt offers the calculator it first
has it work out the taxable rows' divisions, as a model would."""


def noisy(conversation: Conversation, p: float, rng: random.Random) -> str:
    """The oracle's reply with each row independently mistreated with probability `p` (see the
    module docstring). Only `rng` supplies randomness; ``p = 0`` is the oracle's reply exactly."""
    text = conversation.user_text
    quarter, rows = read_ledger(text)
    codes = stated_codes(conversation)
    key = reconcile(quarter, rows, codes)
    sale_codes = tuple(code for code in codes if code != MISSING_ABN_OVER_THRESHOLD) or codes
    faults, kept, trusted = erring_audit(
        rows, key.faults, p, rng, lambda row: sale_codes if row.kind == SALE else codes
    )

    scope = _scope(conversation)
    misflagged = {txn for txn in faults if txn not in key.faults} if scope.from_figures else set()

    def gst_of(row: Row) -> Decimal:
        if row.txn_id in trusted:
            return row.gst
        return correct_gst(row) + (Decimal("1.00") if row.txn_id in misflagged else 0)

    labels = totals(kept, gst_of)
    per_row = (ROW_KEY, {row.txn_id: gst_of(row) for row in rows}) if scope.rows else None
    stated = {label: labels[label] for label in read_labels(text)}
    return ORACLE_NOTE + answer_text(stated, None if scope.from_figures else faults, per_row)


def column_sums(conversation: Conversation) -> str:
    _, rows = read_ledger(conversation.user_text)
    return answer_text(_totals(rows, lambda r: r.gst), {})


def silent(conversation: Conversation) -> str:
    _, rows = read_ledger(conversation.user_text)
    return answer_text(_totals(rows, correct_gst), {})


def blanket(conversation: Conversation) -> str:
    _, rows = read_ledger(conversation.user_text)
    codes = list(stated_codes(conversation))
    return answer_text(_totals(rows, lambda r: r.gst), {r.txn_id: codes for r in rows})


def example(conversation: Conversation) -> str:
    match = _EXAMPLE.search(_system_text(conversation))
    return f"<answer>\n{match.group(1) if match else '{}'}\n</answer>"


def garbage(conversation: Conversation) -> str:
    _, rows = read_ledger(conversation.user_text)
    total = sum((r.amount for r in rows), Decimal(0))
    return (
        f"I looked at {len(rows)} transactions totalling ${total:,} and everything seems fine. G1 is large."
    )


POLICIES: dict[str, Policy] = {
    "oracle": oracle,
    "column-sums": column_sums,
    "silent": silent,
    "blanket": blanket,
    "garbage": garbage,
}
