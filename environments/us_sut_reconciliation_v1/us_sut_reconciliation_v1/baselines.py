"""Scripted policies for the baseline endpoint; each reads only the prompt it is sent.

- ``oracle``: reads the ledger out of the prompt and applies `rules.reconcile`. Scoring 1.0
  proves the prompt alone determines the key (instructions = reward).
- ``gross-only``: every row counted, nothing exempt, nothing flagged: all sales taxed at their
  delivery ZIP's rate and use tax on every untaxed purchase.
- ``origin-sourcing``: the rulebook applied with the business ZIP's rate on every sale, so
  correctly sourced sales look miscalculated and origin-taxed ones look right.
- ``blanket``: flags every row with every fault code; the figures are the ledger's column sums.
- ``garbage``: prose with figures but no answer block.

`noisy` (served as ``noisy-<p>``) is the oracle erring on each row independently with
probability p: it takes a faulted row for clean (no codes, kept in the return, taken as the
books record it) and gives a clean row a plausible wrong code (then treated as the code says),
and works its figures out from its own treatment of the rows.
"""

from __future__ import annotations

import random
from decimal import Decimal

from piv_core.endpoint import Conversation, Policy
from piv_core.ledger_audit import DUPLICATE_INVOICE, OUTSIDE_PERIOD, answer_text, erring_audit
from piv_core.money import cents_of

from us_sut_reconciliation_v1.ledger import SALE
from us_sut_reconciliation_v1.prompt import read_figures, read_ledger
from us_sut_reconciliation_v1.rules import (
    FAULT_CODES,
    FIGURES,
    MISSING_EXEMPTION_CERT,
    combined_rate,
    reconcile,
    tax_at,
    totals,
)

_ZERO = Decimal("0.00")
ORACLE_NOTE = "Reconciled.\n"
PURCHASE_CODES = (DUPLICATE_INVOICE, OUTSIDE_PERIOD, MISSING_EXEMPTION_CERT)
"""The codes a purchase can carry; a sale can carry any."""


def _return(gross: Decimal, exempt: Decimal, sales_due: Decimal, use_due: Decimal) -> dict[str, int]:
    amounts = (gross, exempt, gross - exempt, sales_due, use_due, sales_due + use_due)
    return {name: cents_of(amount) for name, amount in zip(FIGURES, amounts, strict=True)}


def oracle(conversation: Conversation) -> str:
    text = conversation.user_text
    key = reconcile(*read_ledger(text)).asking(read_figures(text))
    return ORACLE_NOTE + answer_text(key.figures, key.faults)


def noisy(conversation: Conversation, p: float, rng: random.Random) -> str:
    """The oracle's reply with each row independently mistreated with probability `p` (see the
    module docstring). Only `rng` supplies randomness; ``p = 0`` is the oracle's reply exactly."""
    text = conversation.user_text
    quarter, business_zip, rows = read_ledger(text)
    key = reconcile(quarter, business_zip, rows)
    faults, audited, trusted = erring_audit(
        rows, key.faults, p, rng, lambda row: FAULT_CODES if row.kind == SALE else PURCHASE_CODES
    )
    kept = [row for row, _ in audited]
    figures = totals(kept, business_zip, trusted)
    return ORACLE_NOTE + answer_text({name: figures[name] for name in read_figures(text)}, faults)


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
    key = reconcile(quarter, business_zip, at_origin)
    return answer_text(key.figures, key.faults)


def blanket(conversation: Conversation) -> str:
    _, _, rows = read_ledger(conversation.user_text)
    sales = [r for r in rows if r.kind == SALE]
    figures = _return(sum((r.gross for r in sales), _ZERO), _ZERO, sum((r.tax for r in sales), _ZERO), _ZERO)
    return answer_text(figures, {r.txn_id: FAULT_CODES for r in rows})


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
