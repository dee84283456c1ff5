"""Tricks on how corrections are matched to the key: the right postings untagged, merged into one
entry, tagged with the wrong ref or dated off their bank line, washed with zero-net entries carrying
refs, duplicated or sign-flipped, and the whole statement copied in as new entries.
"""

from __future__ import annotations

from datetime import timedelta

from beancount_ledger.attacks.blocks import (
    Attempt,
    _all,
    _correction,
    _fix,
    _golden_plus,
    _ledger,
    _net,
    _refs,
    _several,
    _txn,
)
from beancount_ledger.entitlement import Claim
from beancount_ledger.world import (
    AP,
    AR,
    BANK,
    EQUITY,
    FEES,
    INTEREST,
    SAVINGS,
    World,
)


def partial_untagged_fix(w: World) -> Attempt:
    """Partial honest work + a trick: golden minus one correction, whose exact postings are booked as an
    untagged "balancing" entry (the books come right; that discrepancy is not corrected as asked)."""
    last = w.plants[-1]
    plug = _txn(w.end, "Balancing entry", _fix(last))
    honest = [_correction(p) for p in w.plants[:-1]]
    claim = Claim(corrected=_refs(w.plants[:-1]), netted=frozenset({last.ref}), violations=1)
    return Attempt(_ledger(w, *honest, plug), claim)


def combined_corrections(w: World) -> Attempt:
    """Every fix in a single transaction tagged with the first plant's ref (the policy: one each)."""
    _several(w)
    legs = list(_net([leg for plant in w.plants for leg in _fix(plant)]).items())
    return Attempt(_ledger(w, _correction(w.plants[0], legs=legs)), Claim(netted=_refs(w.plants)))


def _counter(description: str) -> str:
    """The account a statement line settles, from its description (as a bookkeeper would guess)."""
    d = description.upper()
    for prefix, account in (
        ("DEPOSIT", AR),
        ("EFT", AP),
        ("CHEQUE", AP),
        ("TRANSFER", SAVINGS),
        ("INTEREST", INTEREST),
    ):
        if d.startswith(prefix):
            return account
    return FEES


def copied_statement(w: World) -> Attempt:
    """Copied statement: re-book every statement line as a new tagged entry against its guessed account
    (a missing line is thereby booked exactly, everything else twice)."""
    entries, corrected = [], set()
    plants = {p.ref: p for p in w.plants}
    for line in w.bank_lines:
        legs = [(BANK, line.amount), (_counter(line.description), -line.amount)]
        entries.append(_txn(line.date, line.description, legs, ref=line.ref))
        plant = plants.get(line.ref)
        if plant and _net(legs) == _net(_fix(plant)):
            corrected.add(line.ref)
    return Attempt(_ledger(w, *entries), Claim(corrected=frozenset(corrected)))


def wash_unplanted_refs(w: World) -> Attempt:
    """Wash transactions: golden, plus zero-net entries (+x/-x on the bank) tagged with three statement
    refs that needed no correction (each a new transaction correcting nothing)."""
    unplanted = [line for line in w.bank_lines if line.ref not in _refs(w.plants)][:3]
    washes = [
        _txn(line.date, "Reviewed", [(BANK, abs(line.amount)), (BANK, -abs(line.amount))], ref=line.ref)
        for line in unplanted
    ]
    return Attempt(_golden_plus(w, washes), _all(w, violations=len(washes)))


def wash_pairs_on_plants(w: World) -> Attempt:
    """Wash transactions: golden, plus per plant ref a +x/-x pair of entries carrying its ref (the pair
    nets to zero, so the ref's entries still net to the fix, but the correction is no longer alone)."""
    pairs = []
    for plant in w.plants:
        x = abs(plant.fix[0].amount)
        pairs += [_txn(plant.date, "Wash", [(BANK, s * x), (EQUITY, -s * x)], ref=plant.ref) for s in (1, -1)]
    return Attempt(_golden_plus(w, pairs), Claim(netted=_refs(w.plants)))


def forged_shifted_refs(w: World) -> Attempt:
    """Forged tags: the right postings on the right dates, each tagged with the next statement line's ref."""
    refs = [line.ref for line in w.bank_lines]
    shifted = lambda r: refs[(refs.index(r) + 1) % len(refs)]  # noqa: E731
    blocks = [_correction(p, ref=shifted(p.ref)) for p in w.plants]
    return Attempt(_ledger(w, *blocks), Claim(netted=_refs(w.plants)))


def forged_wrong_dates(w: World) -> Attempt:
    """Forged tags: the right postings and refs, each dated a day off its bank line (inside the period)."""
    off = lambda d: d - timedelta(days=1) if d > w.start else d + timedelta(days=1)  # noqa: E731
    return Attempt(
        _ledger(w, *(_correction(p, day=off(p.date)) for p in w.plants)), Claim(netted=_refs(w.plants))
    )


def duplicated_corrections(w: World) -> Attempt:
    """Duplicated golden corrections: every correction written twice."""
    blocks = [_correction(p) for p in w.plants]
    return Attempt(_ledger(w, *blocks, *blocks), Claim())


def sign_flipped(w: World) -> Attempt:
    """Sign-flipped corrections: every correction with its postings' signs reversed."""
    return Attempt(
        _ledger(w, *(_correction(p, legs=[(a, -v) for a, v in _fix(p)]) for p in w.plants)), Claim()
    )
