"""Scripted policies for the baseline endpoint; each reads only the prompt it is sent.

- ``oracle``: reads the ledger out of the prompt and applies `rules.reconcile`. Scoring 1.0
  proves the prompt alone determines the key (instructions = reward).
- ``column-sums``: the raw column totals as the BAS (sales, recorded GST), no faults.
- ``silent``: a well-formed answer that finds nothing: GST recomputed per row but no row
  excluded and no credit denied, and an empty faults object.
- ``blanket``: flags every row with every fault code, column-sum figures.
- ``garbage``: prose with figures but no answer block.
"""

from __future__ import annotations

from decimal import Decimal

from piv_core.endpoint import Conversation, Policy
from piv_core.ledger_audit import answer_text

from au_bas_reconciliation_v1.ledger import SALE, Row
from au_bas_reconciliation_v1.prompt import read_ledger
from au_bas_reconciliation_v1.rules import FAULT_CODES, correct_gst, reconcile


def _totals(rows: list[Row], gst_of) -> dict[str, Decimal]:
    sales = [r for r in rows if r.kind == SALE]
    purchases = [r for r in rows if r.kind != SALE]
    g1 = sum((r.amount for r in sales), Decimal("0.00"))
    a1 = sum((gst_of(r) for r in sales), Decimal("0.00"))
    b1 = sum((gst_of(r) for r in purchases), Decimal("0.00"))
    return {"G1": g1, "1A": a1, "1B": b1, "net": a1 - b1}


def oracle(conversation: Conversation) -> str:
    key = reconcile(*read_ledger(conversation.user_text))
    return "Reconciled.\n" + answer_text(key.figures, key.faults)


def column_sums(conversation: Conversation) -> str:
    _, rows = read_ledger(conversation.user_text)
    return answer_text(_totals(rows, lambda r: r.gst), {})


def silent(conversation: Conversation) -> str:
    _, rows = read_ledger(conversation.user_text)
    return answer_text(_totals(rows, correct_gst), {})


def blanket(conversation: Conversation) -> str:
    _, rows = read_ledger(conversation.user_text)
    return answer_text(_totals(rows, lambda r: r.gst), {r.txn_id: list(FAULT_CODES) for r in rows})


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
