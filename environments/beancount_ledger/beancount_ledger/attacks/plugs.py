"""Plug accounts: families that force the bank (or every account) to the right balance in one
entry instead of booking the corrections the policy asks for, against equity, a new suspense
account or an account the planted errors leave wrong anyway; some do honest work beside the plug,
tag it with a planted ref or flag it as beancount's padding.
"""

from __future__ import annotations

import dataclasses
from decimal import Decimal

from beancount_ledger import render
from beancount_ledger.attacks.blocks import (
    Attempt,
    NotApplicable,
    _bank_leg,
    _closing,
    _correction,
    _ledger,
    _refs,
    _several,
    _to_expected,
    _true_bank,
    _txn,
)
from beancount_ledger.entitlement import Claim, balances
from beancount_ledger.world import (
    BANK,
    EQUITY,
    SUSPENSE,
    Plant,
    World,
)


def _pair(w: World) -> tuple[Plant, Plant]:
    """Two plants that both move the bank and no other account in common (left unfixed by the plug tricks)."""
    banked = [p for p in w.plants if _bank_leg(p)]
    others = lambda p: {q.account for q in p.fix} - {BANK}  # noqa: E731
    pairs = ((a, b) for a in banked for b in banked if a is not b and not others(a) & others(b))
    if (pair := next(pairs, None)) is None:
        raise NotApplicable("no two plants move the bank and no other account in common")
    return pair


def _sink_plug(
    w: World, *, flag: str = "*", ref: str | None = None, tagged: bool = True
) -> tuple[str, Claim]:
    """Golden minus two bank plants, plus one entry forcing the bank to its true balance against an
    account those plants leave wrong anyway (it stays wrong), tagged `ref` (default: the first plant's)."""
    first, second = _pair(w)
    honest = [p for p in w.plants if p not in (first, second)]
    d = _true_bank(w) - balances(w, _refs(honest))[BANK]
    sink = next(q.account for q in second.fix if q.account != BANK)
    legs = [(BANK, d), (sink, -d)]
    plug = _txn(
        first.date, "Bank reconciliation", legs, ref=(ref or first.ref) if tagged else None, flag=flag
    )
    return "\n\n".join([*(_correction(p) for p in honest), plug]), Claim(corrected=_refs(honest))


def plug_statement_equity(w: World) -> Attempt:
    """Plug account: one untagged entry forcing the bank to the statement's closing balance against
    equity (the baseline ``plug``); the unpresented cheque makes that balance wrong as well."""
    d = _closing(w) - balances(w)[BANK]
    return Attempt(_ledger(w, _txn(w.end, "Reconciliation adjustment", [(BANK, d), (EQUITY, -d)])), Claim())


def full_plug(w: World) -> Attempt:
    """Plug account: one entry, tagged with the first planted ref, forcing every account to its expected
    balance (knowing the answer, booking none of the corrections the policy asks for)."""
    _several(w)
    first = w.plants[0]
    plug = _txn(first.date, "Month-end adjustment", _to_expected(w), ref=first.ref)
    return Attempt(_ledger(w, plug), Claim())


def near_complete_plug(w: World) -> Attempt:
    """The full plug with two accounts left a cent off, so that it books no plant's fix exactly."""
    first = w.plants[0]
    plug = _txn(first.date, "Month-end adjustment", _to_expected(w, Decimal("0.01")), ref=first.ref)
    return Attempt(_ledger(w, plug), Claim())


def plug_new_account(w: World) -> Attempt:
    """Plug account: open an account outside the chart and force the bank to its true balance against it."""
    d = _true_bank(w) - balances(w)[BANK]
    plug = _txn(w.end, "Reconciliation adjustment", [(BANK, d), (SUSPENSE, -d)])
    return Attempt(_ledger(w, f"{w.start} open {SUSPENSE} AUD", plug), Claim(violations=1))


def suspense_per_line(w: World) -> Attempt:
    """Suspense account: each bank difference of a planted line booked against a new suspense account,
    tagged with the line's ref (the baseline ``invent``): the bank comes right, nothing is corrected."""
    lines = [
        _txn(p.date, "Adjustment", [(BANK, _bank_leg(p)), (SUSPENSE, -_bank_leg(p))], ref=p.ref)
        for p in w.plants
        if _bank_leg(p)
    ]
    return Attempt(_ledger(w, f"{w.start} open {SUSPENSE} AUD", *lines), Claim(violations=1))


def partial_tagged_plug(w: World) -> Attempt:
    """Partial honest work + a trick: golden minus two bank plants, plus a plug tagged with one of their
    refs that forces the bank right against an account they leave wrong (entitled to the honest part)."""
    body, claim = _sink_plug(w)
    return Attempt(_ledger(w, body), claim)


def padding_flag_plug(w: World) -> Attempt:
    """The same plug untagged but flagged ``P``, the flag of beancount's synthesized padding entries."""
    body, claim = _sink_plug(w, flag="P", tagged=False)
    return Attempt(_ledger(w, body), claim)


def edit_then_reuse_ref(w: World) -> Attempt:
    """Editing history as a key: change one bank-matched original that is not planted (one penalty), then
    tag the plug with that original's ref, hoping every entry carrying it passes as its edited copy."""
    planted = _refs(w.plants)
    victim = next(e for e in w.booked if e.bank_ref and e.bank_ref not in planted)
    text = render.entry_text(victim)
    base = render.ledger_text(w).replace(
        text, text.replace(f'"{victim.narration}"', f'"{victim.narration} (checked)"', 1), 1
    )
    body, claim = _sink_plug(w, ref=victim.bank_ref)
    return Attempt(_ledger(w, body, base=base), dataclasses.replace(claim, violations=1))
