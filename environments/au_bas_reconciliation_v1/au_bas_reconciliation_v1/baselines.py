"""Scripted policies for the baseline endpoint; each reads only the prompt it is sent.

- ``oracle``: reads the ledger out of the prompt and applies `rules.reconcile`. Scoring 1.0
  proves the prompt alone determines the key (instructions = reward).
- ``column-sums``: the raw column totals as the BAS (sales, recorded GST), no faults.
- ``silent``: a well-formed answer that finds nothing: GST recomputed per row but no row
  excluded and no credit denied, and an empty faults object.
- ``blanket``: flags every row with every fault code, column-sum figures.
- ``garbage``: prose with figures but no answer block.

`noisy` (served as ``noisy-<p>``) is the oracle erring on each row independently with
probability p: it takes a faulted row for clean (no codes, kept in the BAS, its recorded GST
trusted) and gives a clean row a plausible wrong code (then treated as the code says), and
works its labels out from its own treatment of the rows.
"""

from __future__ import annotations

import random
from decimal import Decimal

from piv_core.endpoint import Conversation, Policy
from piv_core.ledger_audit import answer_text, erring_audit

from au_bas_reconciliation_v1.ledger import SALE, Row
from au_bas_reconciliation_v1.prompt import read_labels, read_ledger
from au_bas_reconciliation_v1.rules import (
    FAULT_CODES,
    MISSING_ABN_OVER_THRESHOLD,
    correct_gst,
    reconcile,
    totals,
)

ORACLE_NOTE = "Reconciled.\n"
SALE_CODES = tuple(code for code in FAULT_CODES if code != MISSING_ABN_OVER_THRESHOLD)
"""The codes a sale can carry; a purchase can carry any."""


def _totals(rows: list[Row], gst_of) -> dict[str, Decimal]:
    sales = [r for r in rows if r.kind == SALE]
    purchases = [r for r in rows if r.kind != SALE]
    g1 = sum((r.amount for r in sales), Decimal("0.00"))
    a1 = sum((gst_of(r) for r in sales), Decimal("0.00"))
    b1 = sum((gst_of(r) for r in purchases), Decimal("0.00"))
    return {"G1": g1, "1A": a1, "1B": b1, "net": a1 - b1}


def oracle(conversation: Conversation) -> str:
    text = conversation.user_text
    key = reconcile(*read_ledger(text)).asking(read_labels(text))
    return ORACLE_NOTE + answer_text(key.figures, key.faults)


def noisy(conversation: Conversation, p: float, rng: random.Random) -> str:
    """The oracle's reply with each row independently mistreated with probability `p` (see the
    module docstring). Only `rng` supplies randomness; ``p = 0`` is the oracle's reply exactly."""
    text = conversation.user_text
    quarter, rows = read_ledger(text)
    key = reconcile(quarter, rows)
    faults, kept, trusted = erring_audit(
        rows, key.faults, p, rng, lambda row: SALE_CODES if row.kind == SALE else FAULT_CODES
    )
    labels = totals(kept, lambda row: row.gst if row.txn_id in trusted else correct_gst(row))
    return ORACLE_NOTE + answer_text({label: labels[label] for label in read_labels(text)}, faults)


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
