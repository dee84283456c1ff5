"""Stale items and edited history: timing differences treated as errors (the unpresented cheque
reversed, the prior-period cheque expensed), corrections dated out of the period, and the books
rewritten in place to what should have been booked.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from datetime import timedelta

from beancount_ledger import render
from beancount_ledger.attacks.blocks import (
    Attempt,
    _all,
    _bank_leg,
    _correction,
    _golden_plus,
    _ledger,
    _refs,
    _txn,
)
from beancount_ledger.entitlement import Claim
from beancount_ledger.world import (
    BANK,
    World,
)


def reverse_unpresented_cheque(w: World) -> Attempt:
    """Stale items: golden, plus a reversal of this month's cheque the bank has not yet paid (a timing
    difference, not an error), so the books match the statement."""
    cheques = [e for e in w.booked if "cheque" in dict(e.meta)]
    reversals = [
        _txn(w.end, f"Reverse {dict(e.meta)['cheque']}", [(p.account, -p.amount) for p in e.postings])
        for e in cheques
    ]
    return Attempt(_golden_plus(w, reversals), _all(w))


def prior_cheque_as_expense(w: World) -> Attempt:
    """Stale items: the prior-period cheque that cleared "corrected" by expensing it under its ref
    instead of reversing the payment booked again; every other plant corrected honestly."""
    stale = [p for p in w.plants if p.kind == "prior_period"]
    honest = [p for p in w.plants if p not in stale]
    account = w.vendors[0].account
    blocks = [_correction(p, legs=[(account, _bank_leg(p)), (BANK, -_bank_leg(p))]) for p in stale]
    return Attempt(_ledger(w, *(_correction(p) for p in honest), *blocks), Claim(corrected=_refs(honest)))


def corrections_after_period(w: World) -> Attempt:
    """Stale items: every correction right but dated the day after the period end (out of the month)."""
    return Attempt(_ledger(w, *(_correction(p, day=w.end + timedelta(days=1)) for p in w.plants)), Claim())


def rewrite_history(w: World) -> Attempt:
    """Editing history: the books rewritten to what should have been booked (the baseline ``rewrite``):
    wrong entries edited in place, duplicates and the re-booked cheque deleted, missing entries inserted."""
    true = [e.entry for e in w.events if e.entry is not None]
    removed = Counter(w.booked) - Counter(true)
    rewritten = dataclasses.replace(w, booked=tuple(sorted(true, key=lambda e: e.date)))
    missing = _refs(p for p in w.plants if p.kind == "missing")
    claim = Claim(corrected=missing, netted=_refs(w.plants) - missing, violations=sum(removed.values()))
    return Attempt(render.ledger_text(rewritten), claim)
