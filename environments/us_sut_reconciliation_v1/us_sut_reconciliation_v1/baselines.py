"""Scripted policies for the baseline endpoint; each reads only the prompt it is sent.

- ``oracle``: reads the ledger out of the prompt and applies `rules.reconcile`. Scoring 1.0
  proves the prompt alone determines the key (instructions = reward).
- ``gross-only``: every row counted, nothing exempt, nothing flagged: all sales taxed at their
  delivery ZIP's rate and use tax on every untaxed purchase.
- ``origin-sourcing``: the rulebook applied with the business ZIP's rate on every sale, so
  correctly sourced sales look miscalculated and origin-taxed ones look right.
- ``blanket``: flags every row with every fault code the system prompt states (all six in the
  full prompt); the figures are the ledger's column sums.
- `example` (a function, not served as a policy): the system prompt's answer example copied as
  it stands (the full prompt's figures and rows; placeholders in a focused prompt).
- ``garbage``: prose with figures but no answer block.

A policy that needs the fault codes reads them from the system prompt (the system message, or
the user message a harness folded it into); a conversation with none gets all six.

`noisy` (served as ``noisy-<p>``) is the oracle erring on each row independently with
probability p: it takes a faulted row for clean (no codes, kept in the return, taken as the
books record it) and gives a clean row a plausible wrong code (then treated as the code says),
and works its figures out from its own treatment of the rows.
"""

from __future__ import annotations

import random
import re
from decimal import Decimal

from piv_core.ledger_audit.grading import DUPLICATE_INVOICE, OUTSIDE_PERIOD, answer_text, erring_audit
from piv_core.parsing.money import cents_of
from piv_core.policy import Conversation, Policy, calling_first
from piv_core.runtime import calculator

from us_sut_reconciliation_v1.ledger import SALE
from us_sut_reconciliation_v1.prompt import ROW_KEY, read_figures, read_ledger, read_scope
from us_sut_reconciliation_v1.rules import (
    FAULT_CODES,
    FIGURES,
    MISSING_EXEMPTION_CERT,
    combined_rate,
    is_exempt,
    reconcile,
    row_tax,
    row_taxes,
    tax_at,
    totals,
)

_ZERO = Decimal("0.00")
ORACLE_NOTE = "Reconciled.\n"
PURCHASE_CODES = (DUPLICATE_INVOICE, OUTSIDE_PERIOD, MISSING_EXEMPTION_CERT)
"""The codes a purchase can carry; a sale can carry any."""
_EXAMPLE = re.compile(r"^<answer>\n(.*?)\n</answer>$", re.MULTILINE | re.DOTALL)


def _system_text(conversation: Conversation) -> str:
    """The system prompt as sent: the system message, else the user text it was folded into."""
    for message in conversation.messages:
        if message.get("role") in ("system", "developer"):
            return Conversation.text(message)
    return conversation.user_text


def stated_codes(conversation: Conversation) -> tuple[str, ...]:
    """The fault codes the conversation's system prompt states (all six when it has none)."""
    return read_scope(_system_text(conversation)).codes or FAULT_CODES


def _return(gross: Decimal, exempt: Decimal, sales_due: Decimal, use_due: Decimal) -> dict[str, int]:
    amounts = (gross, exempt, gross - exempt, sales_due, use_due, sales_due + use_due)
    return {name: cents_of(amount) for name, amount in zip(FIGURES, amounts, strict=True)}


def _asks_rows(conversation: Conversation) -> bool:
    """Whether the system prompt asks for every row's correct tax (`ROW_KEY`)."""
    return read_scope(_system_text(conversation)).rows


def _solve(conversation: Conversation) -> str:
    text = conversation.user_text
    quarter, business_zip, rows = read_ledger(text)
    key = reconcile(quarter, business_zip, rows, stated_codes(conversation)).asking(read_figures(text))
    per_row = (ROW_KEY, row_taxes(rows, business_zip)) if _asks_rows(conversation) else None
    return ORACLE_NOTE + answer_text(key.figures, key.faults, per_row)


def products(conversation: Conversation) -> list[dict[str, str]]:
    """The calculator calls of the taxable sales' products (gross x their ZIP's rate / 100), as
    many as one reply may make."""
    _, _, rows = read_ledger(conversation.user_text)
    taxed = [r for r in rows if r.kind == SALE and not is_exempt(r)][: calculator.CALLS_PER_TURN]
    return [{"expression": f"{r.gross} * {combined_rate(r.zip)} / 100"} for r in taxed]


oracle = calling_first(_solve, calculator.TOOL, products)
"""Reads the ledger and applies `rules.reconcile`; where the prompt offers the calculator it first
has it work out the taxable sales' products, as a model would."""


def noisy(conversation: Conversation, p: float, rng: random.Random) -> str:
    """The oracle's reply with each row independently mistreated with probability `p` (see the
    module docstring). Only `rng` supplies randomness; ``p = 0`` is the oracle's reply exactly."""
    text = conversation.user_text
    quarter, business_zip, rows = read_ledger(text)
    codes = stated_codes(conversation)
    key = reconcile(quarter, business_zip, rows, codes)
    purchase_codes = tuple(code for code in PURCHASE_CODES if code in codes) or codes
    faults, audited, trusted = erring_audit(
        rows, key.faults, p, rng, lambda row: codes if row.kind == SALE else purchase_codes
    )
    kept = [row for row, _ in audited]
    figures = totals(kept, business_zip, trusted)
    per_row = None
    if _asks_rows(conversation):
        per_row = (
            ROW_KEY,
            {row.txn_id: row.tax if row.txn_id in trusted else row_tax(row, business_zip) for row in rows},
        )
    return ORACLE_NOTE + answer_text({name: figures[name] for name in read_figures(text)}, faults, per_row)


def gross_only(conversation: Conversation) -> str:
    _, business_zip, rows = read_ledger(conversation.user_text)
    sales = [r for r in rows if r.kind == SALE]
    gross = sum((r.gross for r in sales), _ZERO)
    sales_due = sum((tax_at(r.gross, combined_rate(r.zip)) for r in sales), _ZERO)
    rate = combined_rate(business_zip)
    use_due = sum((tax_at(r.gross, rate) for r in rows if r.kind != SALE and r.tax == 0), _ZERO)
    return answer_text(_return(gross, _ZERO, sales_due, use_due), {})


def origin_sourcing(conversation: Conversation) -> str:
    quarter, business_zip, rows = read_ledger(conversation.user_text)
    at_origin = [r._replace(zip=business_zip) if r.kind == SALE else r for r in rows]
    key = reconcile(quarter, business_zip, at_origin, stated_codes(conversation))
    return answer_text(key.figures, key.faults)


def blanket(conversation: Conversation) -> str:
    _, _, rows = read_ledger(conversation.user_text)
    sales = [r for r in rows if r.kind == SALE]
    figures = _return(sum((r.gross for r in sales), _ZERO), _ZERO, sum((r.tax for r in sales), _ZERO), _ZERO)
    return answer_text(figures, {r.txn_id: stated_codes(conversation) for r in rows})


def example(conversation: Conversation) -> str:
    match = _EXAMPLE.search(_system_text(conversation))
    return f"<answer>\n{match.group(1) if match else '{}'}\n</answer>"


def garbage(conversation: Conversation) -> str:
    _, _, rows = read_ledger(conversation.user_text)
    total = sum((r.gross for r in rows), _ZERO)
    return f"I went through {len(rows)} transactions worth ${total:,} in all. Tax looks fine; remit about 8%."


POLICIES: dict[str, Policy] = {
    "oracle": oracle,
    "gross-only": gross_only,
    "origin-sourcing": origin_sourcing,
    "blanket": blanket,
    "garbage": garbage,
}
