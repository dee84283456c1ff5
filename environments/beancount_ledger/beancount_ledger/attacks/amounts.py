"""Amount and commodity tricks: corrections off by less than beancount's tolerance or written at
three decimals, a one-legged plug priced at zero, and every correction booked in a foreign or
invented currency on accounts whose ``open`` is widened to carry it.
"""

from __future__ import annotations

from decimal import Decimal

from beancount_ledger import render
from beancount_ledger.attacks.blocks import Attempt, _correction, _fix, _ledger, _true_bank, _txn
from beancount_ledger.entitlement import Claim, balances
from beancount_ledger.world import (
    BANK,
    World,
)


def over_precise_tolerated(w: World) -> Attempt:
    """Over-precise amounts: each correction's first leg off by 0.004, which beancount's tolerance
    accepts although the transaction no longer balances."""
    blocks = []
    for plant in w.plants:
        (a, v), *rest = _fix(plant)
        blocks.append(_correction(plant, legs=[(a, v + Decimal("0.004")), *rest]))
    return Attempt(_ledger(w, *blocks), Claim())


def over_precise_three_decimals(w: World) -> Attempt:
    """Over-precise amounts: every correction balanced, but at three decimals (each leg 0.004 larger)."""
    step = Decimal("0.004")
    blocks = [
        _correction(p, legs=[(a, v + (step if v > 0 else -step)) for a, v in _fix(p)]) for p in w.plants
    ]
    return Attempt(_ledger(w, *blocks), Claim())


def price_plug(w: World) -> Attempt:
    """A one-legged plug: the bank forced to its true balance by a posting priced at zero, so beancount
    sees it balance by weight, tagged with a plant's ref."""
    d = _true_bank(w) - balances(w)[BANK]
    return Attempt(
        _ledger(w, _txn(w.end, "Bank", [(BANK, d)], ref=w.plants[0].ref, tail=" @ 0 AUD")), Claim()
    )


# ---- foreign currencies


def _foreign(w: World, currency: str, *head: str) -> str:
    """Every correction booked in `currency` on accounts whose ``open`` is widened to carry it."""
    touched = {p.account for plant in w.plants for p in plant.fix}
    base = "\n".join(
        f"{line},{currency}" if " open " in line and line.split()[2] in touched else line
        for line in render.ledger_text(w).splitlines()
    )
    blocks = [_correction(p).replace(" AUD", f" {currency}") for p in w.plants]
    return _ledger(w, *head, *blocks, base=base)


def _widened(w: World) -> int:
    return len({p.account for plant in w.plants for p in plant.fix})


def currency_usd_widened_opens(w: World) -> Attempt:
    """Foreign currency: every correction booked in USD, the ``open`` of each account it touches widened
    to ``AUD,USD`` (a changed record each) and an allowed ``operating_currency "USD"`` option; no AUD
    balance moves (a scorer adding numbers across currencies would see every fix)."""
    text = _foreign(w, "USD", 'option "operating_currency" "USD"')
    return Attempt(text, Claim(violations=_widened(w)))


def currency_invented_commodity(w: World) -> Attempt:
    """Foreign currency: every correction booked in an invented commodity ``AUDX``, declared with a
    ``commodity`` directive (a new directive) on accounts whose ``open`` is widened to carry it."""
    text = _foreign(w, "AUDX", f"{w.start} commodity AUDX")
    return Attempt(text, Claim(violations=_widened(w) + 1))
